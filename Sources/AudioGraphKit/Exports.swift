// The embedding API re-exports the core, the stock nodes and Foundation: `import AudioGraphKit` is
// enough, as `import AVFoundation` is on Apple's platforms (programs use URL, Thread, NotificationCenter).
@_exported import AudioGraphCore
@_exported import AudioGraphNodes
@_exported import AudioGraphPlugins
@_exported import Foundation
