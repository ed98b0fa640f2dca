// AudioGraphTesting module.
@_exported import AudioGraphCore
