// What a node type's graph-file checks may ask and report: its declared format, its sound files, problems at its keys.

/// The checker's side of a ``NodeTypeDescriptor``'s `checkFiles` and `checkFormat` hooks: what
/// the graph file declared for the node, the sound files it reads (each read once per path
/// through the loader's `fileInfo`), and reports at the node's keys with the file's name and
/// location, exactly as for the checks the format module makes itself.
///
/// When a `setProperty` update is checked, the context reports only problems under the property
/// it changes (at the update's `value`) and reads no file again.
///
/// Thread safety: used on the loading thread only.
package protocol NodeCheckContext {
    /// The node's id.
    var nodeID: String { get }
    /// The node's declared `format` (empty when not given).
    var declaredFormat: FormatDescription { get }
    /// Whether the node's `properties` give `key`.
    func isGiven(_ key: String) -> Bool
    /// The sound file at `path` (named `file` in the graph, given at property `key`): read once,
    /// or nil when it cannot be read (reported at the key, once per node).
    func audioFileInfo(path: String, file: String, key: String) -> AudioFileInfo?
    /// The sound file at `path` when it was already read successfully (nothing is reported).
    func knownAudioFileInfo(path: String) -> AudioFileInfo?
    /// Reports an invalid value at `properties.<keyPath joined by dots>`.
    func reportInvalid(_ keyPath: [String], _ reason: String)
    /// Reports that `file`, given at property `key`, cannot be read.
    func reportUnreadable(_ key: String, file: String, reason: String)
    /// Reports that the declared `format.<field>` contradicts the node's properties or file.
    func reportFormatConflict(formatField field: String, _ message: String)
    /// Reports that property `key` contradicts the node's format.
    func reportFormatConflict(property key: String, _ message: String)
}

/// A file a node writes (a recorder's): checked against the other writers of the graph (taps,
/// recorders), and never the file an offline render writes.
///
/// Thread safety: a value type; safe to share between threads.
package struct NodeWrittenFile: Sendable, Hashable {
    /// The property that names it.
    package var key: String
    /// The file as written in the graph.
    package var file: String
    /// Its path, resolved against the graph file's folder.
    package var path: String

    package init(key: String, file: String, path: String) {
        self.key = key
        self.file = file
        self.path = path
    }
}

/// Parameters that come from a node's options rather than its type's table (an LV2 plugin's
/// control ports), and what to say about an address that is not one of them.
///
/// Thread safety: a value type; safe to share between threads.
package struct OptionParameters: Sendable {
    /// The parameters.
    package var infos: [ParameterInfo]
    /// Why an address outside ``infos`` is unknown (one line).
    package var unknownReason: String

    package init(infos: [ParameterInfo], unknownReason: String) {
        self.infos = infos
        self.unknownReason = unknownReason
    }
}

extension NodeCheckContext {
    /// Reports a declared `format.channels` that differs from the `property` channel count the
    /// node's options fix (`what` names where it comes from), when `propertyGiven`.
    package func checkDeclaredChannels(property: Int, propertyGiven: Bool, what: String) {
        if propertyGiven, let declared = declaredFormat.channels, declared != property {
            reportFormatConflict(formatField: "channels", "format declares \(declared) channels but \(what) is \(property)")
        }
    }
}
