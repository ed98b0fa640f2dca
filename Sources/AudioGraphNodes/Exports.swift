// The stock nodes module re-exports the core, so `import AudioGraphNodes` is enough for apps.
@_exported import AudioGraphCore
