// AudioGraphKit module.
@_exported import AudioGraphCore
