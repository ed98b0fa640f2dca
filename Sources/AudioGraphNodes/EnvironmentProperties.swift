// The 3D environment node's properties.

/// The Web Audio PannerNode distance models.
public enum DistanceModelType: String, Sendable, Hashable, CaseIterable {
    case inverse, linear, exponential, none
}

/// `distanceModel`: the Web Audio PannerNode distance attenuation.
public struct DistanceModel: Sendable, Hashable {
    /// The formula (default inverse).
    public var model: DistanceModelType
    /// Distance at which attenuation starts, metres (default 1, >= 0).
    public var referenceDistance: Double
    /// Distance beyond which there is no further attenuation, metres (default 10000, > 0).
    public var maxDistance: Double
    /// How fast the gain falls (default 1, >= 0).
    public var rolloffFactor: Double

    /// Creates a distance model; the defaults are Web Audio's.
    public init(model: DistanceModelType = .inverse, referenceDistance: Double = 1, maxDistance: Double = 10000,
                rolloffFactor: Double = 1) {
        self.model = model
        self.referenceDistance = referenceDistance
        self.maxDistance = maxDistance
        self.rolloffFactor = rolloffFactor
    }
}

/// How the environment spatialises its inputs.
public enum RenderingAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// The Web Audio PannerNode's equal-power azimuth panning.
    case equalPower
    /// Binaural rendering from a SOFA HRTF set.
    case hrtf
}

/// The environment's reverb presets (the names of AVAudioUnitReverbPreset).
public enum ReverbPreset: String, Sendable, Hashable, CaseIterable {
    case smallRoom, mediumRoom, largeRoom, largeRoom2, mediumHall, mediumHall2, mediumHall3, largeHall,
         largeHall2, plate, mediumChamber, largeChamber, cathedral
}

/// `reverb`: the environment's shared reverb.
public struct ReverbSettings: Sendable, Hashable {
    /// Whether the reverb runs (default false).
    public var enabled: Bool
    /// The room (default mediumRoom).
    public var preset: ReverbPreset
    /// The reverb's level, dB (default 0, -40...40).
    public var level: Double
    /// A filter on the reverb's output (the engine API's `reverbParameters.filterParameters`;
    /// not in graph files). Nil: none.
    public var filter: EQBand?

    /// Creates settings.
    public init(enabled: Bool = false, preset: ReverbPreset = .mediumRoom, level: Double = 0, filter: EQBand? = nil) {
        self.enabled = enabled
        self.preset = preset
        self.level = level
        self.filter = filter
    }
}

/// `properties` of an `environment` node.
///
/// Thread safety: a value type; safe to share between threads.
public struct EnvironmentProperties: Sendable, Hashable {
    /// Distance attenuation.
    public var distanceModel: DistanceModel
    /// Spatialisation (default equalPower).
    public var renderingAlgorithm: RenderingAlgorithm
    /// The SOFA file as written (nil: the MIT KEMAR set libmysofa ships).
    public var hrtf: String?
    /// `hrtf` resolved against the graph file's folder when relative.
    public var hrtfPath: String?
    /// Output channel count (2: the environment's output is stereo).
    public var channels: Int
    /// The shared reverb.
    public var reverb: ReverbSettings

    /// Whether `input.N.rate` is applied (default false): every input not fed by a live source
    /// then gets a ``VariableRateInputAdapter`` (read on its own timeline from its first frame
    /// at a rate other than 1); the inputs are rendered by the environment's thread, not in
    /// parallel. Set before the node is set up.
    public var variableRate: Bool

    /// Creates properties.
    public init(distanceModel: DistanceModel = DistanceModel(), renderingAlgorithm: RenderingAlgorithm = .equalPower,
                hrtf: String? = nil, hrtfPath: String? = nil, channels: Int = 2, reverb: ReverbSettings = ReverbSettings(),
                variableRate: Bool = false) {
        self.variableRate = variableRate
        self.distanceModel = distanceModel
        self.renderingAlgorithm = renderingAlgorithm
        self.hrtf = hrtf
        self.hrtfPath = hrtfPath
        self.channels = channels
        self.reverb = reverb
    }
}
