// AudioGraphPulse module.
@_exported import AudioGraphCore
