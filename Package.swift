// swift-tools-version:6.0
// AudioGraph: a pull-model node-graph audio engine for Linux, in the spirit of AUGraph.
import PackageDescription
import Foundation

let package = Package(
    name: "AudioGraph",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AudioGraphKit", targets: ["AudioGraphKit"]),
        .library(name: "AudioGraphCore", targets: ["AudioGraphCore"]),
        .library(name: "AudioGraphDescription", targets: ["AudioGraphDescription"]),
        .library(name: "AudioGraphTesting", targets: ["AudioGraphTesting"]),
        .executable(name: "audiograph", targets: ["audiograph"]),
        .executable(name: "audiograph-tool", targets: ["audiograph-tool"]),
    ],
    dependencies: [
        // The command line's argument parsing (the only Swift package we depend on).
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // MARK: C wrappers (one per system library, Debian's -dev packages)
        // libsndfile: reading and writing sound files (players, taps, render output) other than the plain
        // WAV files WAVFileWriter writes itself. Headers only: loaded on first use by CSndFileLazy, so a
        // render to WAV does not load it and its seven codec libraries.
        .systemLibrary(name: "CSndFile", providers: [.apt(["libsndfile1-dev"])]),
        // libsamplerate: sample-rate conversion (converter node, implicit mixer/environment input conversion).
        .systemLibrary(name: "CSampleRate", providers: [.apt(["libsamplerate0-dev"])]),
        // libsoxr: the fast, very-high-quality sample-rate converter (quality `best`, the default).
        .systemLibrary(name: "CSoxr", providers: [.apt(["libsoxr-dev"])]),
        // libpulse: PulseAudio playback and capture. Its headers are on the default path and its
        // pkg-config flags make SwiftPM warn about -pthread, so no pkgConfig here.
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        // libmysofa: reading SOFA HRTF sets (the environment node's binaural rendering).
        .systemLibrary(name: "CMySofa", providers: [.apt(["libmysofa-dev"])]),
        // FFTW (single precision): fast convolution of HRTF impulse responses.
        .systemLibrary(name: "CFFTW", providers: [.apt(["libfftw3-dev"])]),
        // libebur128: EBU R128 loudness, loudness range and true peak (`audiograph meter`, `render` summary).
        .systemLibrary(name: "CEBUR128", providers: [.apt(["libebur128-dev"])]),
        // cairo: drawing the pictures of `audiograph plot` (PNG and SVG surfaces).
        .systemLibrary(name: "CCairo", providers: [.apt(["libcairo2-dev"])]),
        // lilv: finding, describing and instantiating LV2 plugins (the `lv2` node, `audiograph plugins`).
        .systemLibrary(name: "CLilv", providers: [.apt(["liblilv-dev", "lv2-dev"])]),
        // librubberband: time stretching and pitch shifting in real-time mode (the timePitch node).
        .systemLibrary(name: "CRubberBand", providers: [.apt(["librubberband-dev"])]),
        // FFmpeg's libavformat/libavcodec/libavutil: AAC in M4A (`AudioFile` with kAudioFormatMPEG4AAC), which
        // libsndfile does not do.
        // Headers only: the libraries are not linked but loaded on first use by CAVCodecLazy.
        .systemLibrary(name: "CAVCodec", providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),
        // dlopen on first use: the one loader the lazy C wrappers share (Docs/Architecture.md "Lazy C libraries").
        .target(name: "CLazyLibrary"),
        // The libav* functions AudioGraphKit calls, resolved from FFmpeg on first use (CLazyLibrary).
        .target(name: "CAVCodecLazy", dependencies: ["CAVCodec", "CLazyLibrary"]),
        // Headers only in CCairo, CPulse, CLilv, CRubberBand, CMySofa, CFFTW and CFluidSynth: each library is
        // loaded on the first call of any of its functions, through the trampolines of its C<Name>Lazy target.
        .target(name: "CCairoLazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CPulseLazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CLilvLazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CRubberBandLazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CMySofaLazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CFFTWLazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CFluidSynthLazy", dependencies: ["CLazyLibrary"]),
        // The same for libsoxr (with libgomp), libsamplerate and libebur128 (headers only in CSoxr, CSampleRate
        // and CEBUR128): a render that converts no rate and measures no loudness does not load them.
        .target(name: "CSoxrLazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CSampleRateLazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CEBUR128Lazy", dependencies: ["CLazyLibrary"]),
        .target(name: "CSndFileLazy", dependencies: ["CLazyLibrary"]),
        // libfluidsynth: the SoundFont 2 voice engine of the sampler node (AudioUnitSampler).
        .systemLibrary(name: "CFluidSynth", providers: [.apt(["libfluidsynth-dev"])]),
        // webrtc-audio-processing (C++): echo cancellation, noise suppression and gain control, the engine's
        // voice processing (the library PulseAudio's module-echo-cancel uses). Headers only (no pkgConfig, whose
        // flags would link it): CVoiceProcessing loads the library on first use through CLazyLibrary.
        .systemLibrary(name: "CWebRTCAudioProcessing", providers: [.apt(["libwebrtc-audio-processing-dev"])]),
        // The C face of webrtc::AudioProcessing that Swift calls (C++ inside; links libstdc++). The include path
        // is webrtc-audio-processing.pc's (its defines are in the source).
        .target(name: "CVoiceProcessing", dependencies: ["CWebRTCAudioProcessing", "CLazyLibrary"],
                cxxSettings: [.unsafeFlags(["-I/usr/include/webrtc_audio_processing"])],
                linkerSettings: [.linkedLibrary("stdc++")]),
        // C macros of libpulse that do not import into Swift (PA_VOLUME_NORM, ...).
        .target(name: "CPulseShim", dependencies: ["CPulse"]),
        // A malloc/pthread_mutex_lock interposer counting calls made on marked threads (tests only).
        .target(name: "CAllocationCounter"),
        // The convolver's inner loops, with an AVX2 version chosen by glibc's CPU features.
        .target(name: "CVectorKernels"),
        // glibc's GNU extensions Swift's Glibc module leaves out (sched_getaffinity, CPU_COUNT).
        .target(name: "CGlibcShim"),
        // argc and argv for the `audiograph` executable's static Swift runtime, without its /proc/self/maps scan.
        .target(name: "CSwiftArguments"),

        // MARK: Swift modules
        // Real-time building blocks shared by the engine, the nodes and the I/O: lock-free rings,
        // the wake semaphore, the render-thread mark and the lock that checks it.
        .target(name: "AudioGraphRealtime", dependencies: ["CGlibcShim"]),
        // Engine core: formats, buffers, parameters, nodes, graph, pending changes, render plan.
        // No C imports, no file format.
        .target(name: "AudioGraphCore", dependencies: ["AudioGraphRealtime"]),
        // Stock nodes: oscillator, player, mixer, eq, delay, converter, environment, generic output.
        .target(name: "AudioGraphNodes",
                dependencies: ["AudioGraphCore", "AudioGraphRealtime", "CSndFile", "CSampleRate", "CSoxr", "CMySofa", "CFFTW",
                               "CRubberBand", "CFluidSynth",
                               "CMySofaLazy", "CFFTWLazy", "CRubberBandLazy", "CFluidSynthLazy", "CVectorKernels",
                               "CSoxrLazy", "CSampleRateLazy", "CSndFileLazy"]),
        // PulseAudio I/O: output and input nodes, devices. The only importer of CPulse.
        .target(name: "AudioGraphPulse",
                dependencies: ["AudioGraphCore", "AudioGraphRealtime", "CPulse", "CPulseShim", "CPulseLazy"]),
        // Plugin hosting: the LV2 catalogue and the lv2 node. Its own module so that only it links
        // lilv and loads foreign binaries.
        .target(name: "AudioGraphPlugins", dependencies: ["AudioGraphCore", "AudioGraphRealtime", "CLilv", "CLilvLazy"]),
        // The graph-file format: JSON parser, reader, schema, checker, errors, and the factory
        // that turns node descriptions into nodes through the registered node types.
        .target(name: "AudioGraphDescription", dependencies: ["AudioGraphCore"]),
        // Graph files to sound files without Foundation: load and build a graph file (every node type
        // registered), render it offline, measure its levels and loudness. The `audiograph` executable
        // links only this (its start-up, Docs/Performance.md); AudioGraphKit re-exports it.
        .target(name: "AudioGraphOffline",
                dependencies: ["AudioGraphCore", "AudioGraphRealtime", "AudioGraphNodes", "AudioGraphPulse", "AudioGraphPlugins",
                               "AudioGraphDescription", "CEBUR128", "CEBUR128Lazy"]),
        // The embedding API: the engine (AVAudioEngine's), live playback, plots, files; re-exports AudioGraphOffline.
        .target(name: "AudioGraphKit",
                dependencies: ["AudioGraphCore", "AudioGraphRealtime", "AudioGraphNodes", "AudioGraphPulse", "AudioGraphPlugins",
                               "AudioGraphDescription", "AudioGraphOffline", "CSndFile", "CCairo", "CFFTW", "CSoxr", "CSampleRate", "CAVCodec", "CAVCodecLazy",
                               "CCairoLazy", "CVoiceProcessing", "CSoxrLazy", "CSampleRateLazy"]),
        // Deterministic offline driver, signal measurements and assertions for tests.
        .target(name: "AudioGraphTesting",
                dependencies: ["AudioGraphCore", "AudioGraphNodes", "AudioGraphRealtime", "CAllocationCounter"]),
        // What both executables of the command line share, without Foundation: the render command
        // (RenderJob: its plain command lines and its run), diagnostics, progress bar, signal handling.
        .target(name: "AudioGraphCommandLine", dependencies: ["AudioGraphOffline", "AudioGraphRealtime"]),
        // `audiograph`: renders a plain `render` command line without Foundation or swift-argument-parser (its
        // start-up: Docs/Performance.md) and execs `audiograph-tool` for every other command line.
        .executableTarget(name: "audiograph", dependencies: ["AudioGraphCommandLine", "CSwiftArguments"]),
        // `audiograph-tool`: every subcommand, help and usage errors, a thin layer over AudioGraphKit.
        .executableTarget(name: "audiograph-tool",
                          dependencies: ["AudioGraphKit", "AudioGraphRealtime", "AudioGraphCommandLine",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // Per-kernel throughput against C floors (scripts/bench-kernels.sh, `make bench`).
        .executableTarget(name: "KernelBench", dependencies: ["AudioGraphCore", "AudioGraphNodes"]),

        // MARK: Examples: programs written against the engine API (each beside its AVAudioEngine original)
        .executableTarget(name: "SoundMeter", dependencies: ["AudioGraphKit"], path: "Examples/SoundMeter",
                          exclude: ["Apple.swift.txt"]),
        .executableTarget(name: "BackToBack", dependencies: ["AudioGraphKit"], path: "Examples/BackToBack",
                          exclude: ["Apple.swift.txt"]),
        .executableTarget(name: "Synth", dependencies: ["AudioGraphKit"], path: "Examples/Synth",
                          exclude: ["Apple.swift.txt"]),
        .executableTarget(name: "Repatch", dependencies: ["AudioGraphKit"], path: "Examples/Repatch",
                          exclude: ["Apple.swift.txt"]),
        .executableTarget(name: "GraphCheck", dependencies: ["AudioGraphKit"], path: "Examples/GraphCheck",
                          exclude: ["Apple.swift.txt"]),
        .executableTarget(name: "MIDIPlayer", dependencies: ["AudioGraphKit"], path: "Examples/MIDIPlayer",
                          exclude: ["Apple.swift.txt"]),
        // The microphone-to-speech converter, built twice: in the Swift 6 language mode (the package's)
        // and, from the same file (Swift5/main.swift links to it), in the Swift 5 mode.
        .executableTarget(name: "SpeechConverter", dependencies: ["AudioGraphKit"], path: "Examples/SpeechConverter",
                          exclude: ["Apple.swift.txt", "Swift5"]),
        .executableTarget(name: "SpeechConverterSwift5", dependencies: ["AudioGraphKit"], path: "Examples/SpeechConverter/Swift5",
                          swiftSettings: [.swiftLanguageMode(.v5)]),

        // MARK: Tests (mirror the sources)
        .testTarget(name: "AudioGraphRealtimeTests",
                    dependencies: ["AudioGraphRealtime", "AudioGraphTesting"]),
        .testTarget(name: "AudioGraphTestingTests",
                    dependencies: ["AudioGraphTesting", "AudioGraphRealtime", "CAllocationCounter"]),
        .testTarget(name: "AudioGraphCoreTests",
                    dependencies: ["AudioGraphCore", "AudioGraphNodes", "AudioGraphRealtime", "AudioGraphTesting"]),
        .testTarget(name: "AudioGraphDescriptionTests",
                    dependencies: ["AudioGraphCore", "AudioGraphDescription", "AudioGraphNodes", "AudioGraphPulse", "AudioGraphPlugins",
                                   "AudioGraphTesting"]),
        .testTarget(name: "AudioGraphNodesTests",
                    dependencies: ["AudioGraphCore", "AudioGraphNodes", "AudioGraphRealtime", "AudioGraphTesting",
                                   "CMySofa", "CSndFile", "CRubberBand"]),
        .testTarget(name: "AudioGraphPulseTests",
                    dependencies: ["AudioGraphPulse", "AudioGraphKit", "AudioGraphRealtime", "AudioGraphTesting"]),
        .testTarget(name: "AudioGraphPluginsTests",
                    dependencies: ["AudioGraphPlugins", "AudioGraphCore", "AudioGraphNodes", "AudioGraphRealtime", "AudioGraphTesting"]),
        .testTarget(name: "AudioGraphKitTests",
                    dependencies: ["AudioGraphKit", "AudioGraphCore", "AudioGraphNodes", "AudioGraphPulse", "AudioGraphRealtime",
                                   "AudioGraphTesting", "CCairo"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "audiographTests", dependencies: ["audiograph-tool", "AudioGraphCommandLine", "AudioGraphKit", "AudioGraphTesting", "CCairo"]),
    ],
    swiftLanguageModes: [.v6]
)

// The fuzz targets (`make fuzz`) exist only when AG_FUZZ is set: they are linked against
// libFuzzer's main (`-sanitize=fuzzer`), which no ordinary build has.
if ProcessInfo.processInfo.environment["AG_FUZZ"] != nil {
    package.targets += [
        .executableTarget(name: "FuzzGraphLoader", dependencies: ["AudioGraphKit"], path: "Fuzz/FuzzGraphLoader"),
        .executableTarget(name: "FuzzWAVReader", dependencies: ["AudioGraphKit", "AudioGraphNodes", "AudioGraphTesting", "CSndFile"],
                          path: "Fuzz/FuzzWAVReader"),
        .executableTarget(name: "FuzzSOFAReader", dependencies: ["AudioGraphKit"], path: "Fuzz/FuzzSOFAReader"),
    ]
}
