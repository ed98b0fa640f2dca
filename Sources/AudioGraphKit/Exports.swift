// The embedding API re-exports the core and the stock nodes: `import AudioGraphKit` is enough.
@_exported import AudioGraphCore
@_exported import AudioGraphNodes
