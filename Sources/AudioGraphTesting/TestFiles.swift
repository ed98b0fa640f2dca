// Files for tests: temporary folders removed at teardown, and sound files written from sample arrays.
import AudioGraphNodes
import Foundation

/// Something that runs blocks when a test ends (`XCTestCase` is one: each test module declares
/// `extension XCTestCase: TeardownRegistering {}`, which keeps this module free of XCTest).
public protocol TeardownRegistering {
    /// Runs `block` after the current test.
    func addTeardownBlock(_ block: @escaping () -> Void)
}

/// Temporary folders and sound files for tests.
///
/// Thread safety: stateless; the functions touch only the files they are given or create.
public enum TestFiles {
    /// A fresh folder under the system's temporary folder, removed when `test` ends.
    public static func makeTemporaryDirectory(_ test: TeardownRegistering) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ag-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Writes one channel per array to a sound file at `path` (the type follows the extension:
    /// WAV for `.wav`) with `AudioFileWriter`.
    public static func writeSoundFile(_ path: String, _ channels: [[Float]], sampleRate: Double,
                                      sampleType: SampleType = .float32) throws {
        let frames = channels[0].count
        let storage = ChannelBufferStorage(channelCount: channels.count, capacity: frames)
        for (c, ch) in channels.enumerated() {
            for i in 0..<frames { storage.list.channel(c)[i] = ch[i] }
        }
        let w = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: sampleRate, channelCount: channels.count,
                                                                     sampleType: sampleType))
        try w.write(storage.list, frameCount: frames)
        try w.close()
    }
}
