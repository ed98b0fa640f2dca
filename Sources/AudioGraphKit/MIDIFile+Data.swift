// Reading a Standard MIDI File from Foundation's Data (the engine API's sequencer loads data as well as files).
import AudioGraphNodes
import Foundation

extension MIDIFile {
    /// Reads `data`; `name` names the file in errors (``init(bytes:name:)``).
    /// - Throws: ``MIDIFileError`` with the byte offset and the reason.
    public init(data: Data, name: String) throws(MIDIFileError) {
        try self.init(bytes: [UInt8](data), name: name)
    }
}
