// AudioGraphNodes module.
@_exported import AudioGraphCore
