// The checker's NodeCheckContext: what a node type's file and format hooks read and where their problems are reported.
import AudioGraphCore

/// The ``NodeCheckContext`` the checker gives a descriptor's `checkFiles`/`checkFormat` hooks:
/// the node's declared format and properties, the sound files read once per path, and reports
/// at the node's keys. For a `setProperty` update (``changedValueLocation`` set) problems are
/// reported under the update's `value` and no file is read again.
///
/// Thread safety: used on the loading thread only.
struct NodeChecks: NodeCheckContext {
    let checker: GraphChecker
    let node: NodeDescription
    /// Where the node is defined.
    let location: String
    /// For a `setProperty` update: where its `value` is.
    var changedValueLocation: String?

    private var propertiesLocation: String { DescriptionReader.join(location, "properties") }

    var nodeID: String { node.id }

    var declaredFormat: FormatDescription { node.format ?? FormatDescription() }

    func isGiven(_ key: String) -> Bool { node.properties[key] != nil }

    func audioFileInfo(path: String, file: String, key: String) -> AudioFileInfo? {
        if changedValueLocation != nil { return checker.audioFiles[path] }
        return checker.audioInfo(path, node: node.id, file: file, at: DescriptionReader.join(propertiesLocation, key))
    }

    func knownAudioFileInfo(path: String) -> AudioFileInfo? { checker.audioFiles[path] }

    func reportInvalid(_ keyPath: [String], _ reason: String) {
        let at: String
        if let value = changedValueLocation {
            at = keyPath.dropFirst().reduce(value) { DescriptionReader.join($0, $1) }
        } else {
            at = keyPath.reduce(propertiesLocation) { DescriptionReader.join($0, $1) }
        }
        checker.report(at, .invalidValue(reason))
    }

    func reportUnreadable(_ key: String, file: String, reason: String) {
        guard changedValueLocation == nil else { return }
        checker.report(DescriptionReader.join(propertiesLocation, key), .unreadableAudioFile(node: node.id, file: file, reason: reason))
    }

    func reportFormatConflict(formatField field: String, _ message: String) {
        checker.report(DescriptionReader.join(DescriptionReader.join(location, "format"), field), .formatConflict(message))
    }

    func reportFormatConflict(property key: String, _ message: String) {
        checker.report(DescriptionReader.join(propertiesLocation, key), .formatConflict(message))
    }
}
