// One node type as the graph format and the engine see it: name, schema, options decoder, factory, typed properties, memory.

/// What a node type's `properties` object decodes to: the type's own options value (a struct
/// of typed fields, compared and hashed as a value).
package typealias NodeOptions = Hashable & Sendable

/// Everything the graph format, its checker and the engine need to know about one node type,
/// written beside the node class and registered with ``NodeTypeRegistry`` (as the LV2 catalogue
/// is asked for plugins): its name, its schema (kind, buses, property keys and which of them may
/// change while the graph runs, its ``ParameterTable``), the decoder from a node's `properties`
/// to typed options, the factory that makes the ``GraphNode``, the conversion of a property
/// change to the typed value the node's `validateProperty` expects, optional hooks for what
/// only some types need (file and format checks, eq bands, a plugin's own parameters, files
/// written, a player's end, a limit per graph), and (on the node class,
/// ``GraphNode/stateMemoryEstimate(outputFormat:)``) the memory its state needs. Output
/// nodes read ``NodeBuildContext/placement`` in their factory.
///
/// The graph-file loader, `audiograph validate`, the renderer and `AudioEngine(contentsOf:)`
/// find a registered type by its name; Docs/Architecture.md has the recipe for a new one.
///
/// Thread safety: immutable; its closures are called on control threads (never the render thread).
package struct NodeTypeDescriptor: Sendable {
    /// The name graph files write in `"type"` (letters, digits; unique among node types).
    package let name: String
    /// What role the type plays (a source, an effect, ...).
    package let kind: NodeKind
    /// Its input buses (a variable count is chosen by a node's `inputBusCount`).
    package let inputBuses: BusCountRule
    /// Its output bus count (0 for an output).
    package let outputBusCount: Int
    /// The keys its `properties` object may have (others are reported as unknown).
    package let propertyKeys: [String]
    /// The properties a `setProperty` update may change while the graph runs.
    package let runtimePropertyKeys: [String]
    /// Whether each input bus may arrive at any rate and channel count (the node converts).
    package let convertsInputs: Bool
    /// Its parameters: the node class's own table (the file's values, automation and the
    /// engine's ranges all come from it).
    package let parameters: ParameterTable
    /// Decodes a node's `properties` (every key already checked against ``propertyKeys``):
    /// invalid fields are reported through the reader and keep their defaults.
    package let decode: @Sendable (_ reader: any NodePropertyReader) -> any NodeOptions
    /// Makes the node (its parameters' file values and automation are set by the caller).
    package let makeNode: @Sendable (_ context: NodeBuildContext) throws(AudioGraphError) -> GraphNode
    /// The typed value of property `name` in `options` after a `setProperty` change (what the
    /// node's `validateProperty` expects), or nil to pass the JSON value as it is.
    package let typedProperty: @Sendable (_ name: String, _ options: any NodeOptions) -> (any Sendable)?

    // MARK: Optional hooks (each defaults to "nothing to say")

    /// Checks the files the options name (a player's sound file and its segment, an
    /// environment's HRTF set), reporting through the context; nil: nothing to check.
    package let checkFiles: (@Sendable (_ options: any NodeOptions, _ context: any NodeCheckContext) -> Void)?
    /// Checks the node's declared `format` against its options or file (a channel count the
    /// properties fix, a player's file rate); nil: nothing beyond the format's general rules.
    package let checkFormat: (@Sendable (_ options: any NodeOptions, _ context: any NodeCheckContext) -> Void)?
    /// How many elements the table's per-band parameters have for these options (an eq's bands).
    package let bandCount: @Sendable (_ options: any NodeOptions) -> Int
    /// Parameter defaults the options set over the table's (an eq band's frequency, gain, q).
    package let parameterDefaults: @Sendable (_ options: any NodeOptions) -> [ParameterAddress: Double]
    /// Parameters the options define beyond the table (an LV2 plugin's ports); nil: the table's only.
    package let optionParameters: (@Sendable (_ options: any NodeOptions) -> OptionParameters)?
    /// The files the node writes (a recorder's), checked against the graph's other writers.
    package let writtenFiles: @Sendable (_ options: any NodeOptions) -> [NodeWrittenFile]
    /// When the node's sound ends on the graph's timeline, seconds, given the sound files read
    /// (a non-looping player: its start time plus what it plays); nil: it does not end by
    /// itself. An offline render without a duration lasts until the last one ends.
    package let playbackEnd: (@Sendable (_ options: any NodeOptions, _ files: (String) -> AudioFileInfo?) -> Double?)?
    /// The most nodes of this type one graph may hold at any moment (an input: one); nil: no limit.
    package let maximumPerGraph: Int?

    /// A node type. `decode` defaults to no options (a type without properties),
    /// `typedProperty` to the JSON value, the hooks to nothing.
    package init(name: String, kind: NodeKind, inputBuses: BusCountRule, outputBusCount: Int,
                propertyKeys: [String] = [], runtimePropertyKeys: [String] = [], convertsInputs: Bool = false,
                parameters: ParameterTable = .none,
                decode: @escaping @Sendable (_ reader: any NodePropertyReader) -> any NodeOptions = { _ in NoNodeOptions() },
                typedProperty: @escaping @Sendable (_ name: String, _ options: any NodeOptions) -> (any Sendable)? = { _, _ in nil },
                checkFiles: (@Sendable (_ options: any NodeOptions, _ context: any NodeCheckContext) -> Void)? = nil,
                checkFormat: (@Sendable (_ options: any NodeOptions, _ context: any NodeCheckContext) -> Void)? = nil,
                bandCount: @escaping @Sendable (_ options: any NodeOptions) -> Int = { _ in 0 },
                parameterDefaults: @escaping @Sendable (_ options: any NodeOptions) -> [ParameterAddress: Double] = { _ in [:] },
                optionParameters: (@Sendable (_ options: any NodeOptions) -> OptionParameters)? = nil,
                writtenFiles: @escaping @Sendable (_ options: any NodeOptions) -> [NodeWrittenFile] = { _ in [] },
                playbackEnd: (@Sendable (_ options: any NodeOptions, _ files: (String) -> AudioFileInfo?) -> Double?)? = nil,
                maximumPerGraph: Int? = nil,
                makeNode: @escaping @Sendable (_ context: NodeBuildContext) throws(AudioGraphError) -> GraphNode) {
        self.checkFiles = checkFiles
        self.checkFormat = checkFormat
        self.bandCount = bandCount
        self.parameterDefaults = parameterDefaults
        self.optionParameters = optionParameters
        self.writtenFiles = writtenFiles
        self.playbackEnd = playbackEnd
        self.maximumPerGraph = maximumPerGraph
        self.name = name
        self.kind = kind
        self.inputBuses = inputBuses
        self.outputBusCount = outputBusCount
        self.propertyKeys = propertyKeys
        self.runtimePropertyKeys = runtimePropertyKeys
        self.convertsInputs = convertsInputs
        self.parameters = parameters
        self.decode = decode
        self.typedProperty = typedProperty
        self.makeNode = makeNode
    }
}

/// The options of a node type without properties.
package struct NoNodeOptions: Hashable, Sendable {
    package init() {}
}
