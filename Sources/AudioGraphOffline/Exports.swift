// The offline renderer re-exports what its API speaks in (graphs, nodes, graph files): `import AudioGraphOffline`
// is enough to load, build and render a graph file.
@_exported import AudioGraphCore
@_exported import AudioGraphNodes
@_exported import AudioGraphDescription
