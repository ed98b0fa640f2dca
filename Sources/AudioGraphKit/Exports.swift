// The embedding API re-exports the core, the stock nodes, the plugin host, the graph-file format, the offline renderer and
// Foundation: `import AudioGraphKit` is
// enough, as `import AVFoundation` is on Apple's platforms (programs use URL, Thread, NotificationCenter).
@_exported import AudioGraphCore
@_exported import AudioGraphNodes
@_exported import AudioGraphPlugins
@_exported import AudioGraphDescription
@_exported import AudioGraphOffline
@_exported import Foundation
