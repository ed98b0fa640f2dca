// The time-stretching and pitch-shifting effect over librubberband (cf. AVAudioUnitTimePitch).
import AudioGraphCore

/// Changes tempo and pitch independently (cf. `AVAudioUnitTimePitch`), with librubberband in
/// real-time mode (see ``TimePitchStretcher``), or WSOLA with libsamplerate (`fastest`).
///
/// Property: `quality` (``TimePitchQuality``: `finer`, rubberband's R3 engine, the default;
/// `faster`, its R2 engine, about a quarter of the CPU, whose pitch is taken at initialize and
/// whose rate is at most 5 times its pitch scale; `fastest`, WSOLA (``WSOLAStretcher``), its
/// output resampled by the pitch ratio as SoX's `pitch` does (``WSOLAPitchShifter``, only
/// while the pitch is or has been other than 0)), chosen when the node is set up.
///
/// Parameters: `rate` (playback rate, 1/32...32, 1: at 2 the input plays twice as fast, half as
/// long, same pitch), `pitch` (cents, -2400...2400, 0), `overlap` (3...32, 8: rubberband's
/// analysis window, chosen when the kernel is made — a change takes effect at the next
/// initialize), `bypass` (0/1: the input passes unchanged, 1:1 on its own timeline; read at
/// the first frame of each 256-frame block of output, so bypass automation too is slice-size
/// independent).
///
/// Input timeline: the node pulls its input on the input's own timeline
/// (``GraphNode/pullsInputsOnTheirOwnTimeline``, a ``TimelineInputAdapter``), as many frames as
/// rubberband needs — `rate` times the output, plus rubberband's start pad ahead at the start.
/// The input is fed in fixed blocks of 256 frames whatever the render slice, and `rate` and
/// `pitch` are read at the output frame where the block's output begins, so the output is the
/// same for every slice size (tested with 64, 100 and 512 frames), automation and change lists
/// included.
///
/// Alignment and latency: the node feeds rubberband's preferred start pad of zeros and discards
/// its start delay, so output frame 0 is aligned with input frame 0 (as AVAudioUnitTimePitch's
/// output is); the price is that it reads ``latencyFrames`` of input ahead of what it plays.
/// Leaving bypass starts rubberband over the same way (a jump of about that many input frames).
///
/// Its input must be pullable ahead (a player, an oscillator, a mixer of them; not a live
/// input). A source that also feeds other nodes is rendered on two timelines (as with a
/// converter).
///
/// Thread safety: configure on a control thread; parameters may be set from any thread.
public final class TimePitchNode: GraphNode, @unchecked Sendable {
    /// Input frames per rubberband call (independent of the render slice).
    public static let blockSize = 256

    // MARK: Control thread only
    /// The stretch engine, taken when the kernel is made (at initialize).
    public private(set) var quality: TimePitchQuality
    /// Whether `pitch` may be set while the graph plays (true unless the node was made for an
    /// offline render of a graph file, where only the file's automation moves it). Where it is
    /// false and the pitch is 0 without automation at initialize, rubberband runs without its
    /// always-on pitch resampler (16 % fewer instructions with R3, see ``TimePitchStretcher``);
    /// a pitch set later still shifts, after a gap of about 20 ms while the resampler starts.
    public let livePitchChanges: Bool
    /// Whether each channel gets a mono stretcher of its own, channels 1… on a helper thread
    /// (``RenderHelperThread``) when the graph renders on more than one thread
    /// (``AudioGraph/renderThreadCount``): `finer` in an offline file render (where
    /// ``livePitchChanges`` is false). A stereo stretch then takes two cores; the output is the
    /// same with or without the thread (each channel is its own stretch), and differs from one
    /// stereo stretcher only in that rubberband no longer locks the channels' phases below
    /// 600 Hz (Docs/Performance.md "Time-stretch").
    public var splitsChannels: Bool { !livePitchChanges && quality == .finer }

    /// A time-pitch node with the schema's parameters (ranges at `sampleRate`), the stretch
    /// engine `quality`, and whether the pitch may be set while it plays (see
    /// ``livePitchChanges``). Control thread.
    public init(id: String, sampleRate: Double, quality: TimePitchQuality = .default, livePitchChanges: Bool = true) {
        self.quality = quality
        self.livePitchChanges = livePitchChanges
        super.init(id: id, typeName: "timePitch", inputBusCount: 1, outputBusCount: 1,
                   parameters: ParameterTable.timePitch.parameterInfos(sampleRate: sampleRate, inputBusCount: 0, bandCount: 0))
        requiredLibraries = quality == .fastest ? [.samplerate] : [.rubberBand]
    }

    /// The `timePitch` node type: one input, one output, `properties.quality`
    /// (``TimePitchProperties``), ``ParameterTable/timePitch`` (`overlap` and `quality` are read
    /// when the node is set up).
    package static let descriptor = NodeTypeDescriptor(
        name: "timePitch", kind: .effect, inputBuses: .fixed(1), outputBusCount: 1, propertyKeys: ["quality"],
        parameters: .timePitch,
        decode: { reader in
            var result = TimePitchProperties()
            if let quality = reader.choice("quality", as: TimePitchQuality.self) { result.quality = quality }
            return result
        },
        makeNode: { context in
            TimePitchNode(id: context.id, sampleRate: context.sampleRate,
                          quality: context.options(as: TimePitchProperties.self)?.quality ?? .default,
                          livePitchChanges: !context.rendersOffline)
        })

    /// True: rubberband consumes `rate` times the output.
    public override var pullsInputsOnTheirOwnTimeline: Bool { true }

    /// Its largest `rate` (value and automation): the input frames it consumes per output frame.
    public override var maximumInputFramesPerOutputFrame: Double {
        parameter("rate")?.largestScheduledValue ?? 1
    }

    /// A ``TimelineInputAdapter``: the input, unconverted, on its own timeline.

    public override func makeInputAdapter(bus: Int, sourceFormat: StreamFormat, targetSampleRate: Double,
                                          maximumFramesPerSlice: Int) throws(AudioGraphError) -> InputAdapter? {
        TimelineInputAdapter()
    }

    /// Makes rubberband, sizes and warms it up (control thread: allocates, takes a few ms), or
    /// WSOLA and its pitch shifter (`fastest`).
    public override func makeKernel(maximumFramesPerSlice: Int) throws(AudioGraphError) -> NodeKernel {
        let k = try TimePitchKernel(node: self, maximumFramesPerSlice: maximumFramesPerSlice)
        latencyFramesValue = k.stretcher?.startDelay ?? k.wsola?.readAhead ?? 0
        return k
    }

    /// Rubberband's start delay at the parameters the kernel was made with, in frames: how far
    /// ahead of its output the node reads its input (the output itself is aligned). 0 before
    /// initialize. Control thread.
    public var latencyFrames: Int { latencyFramesValue }
    private var latencyFramesValue = 0
}

/// Render side of ``TimePitchNode``.
final class TimePitchKernel: NodeKernel, @unchecked Sendable {
    // MARK: Render thread only
    /// librubberband (`finer`, `faster`), or nil with `fastest`.
    let stretcher: TimePitchStretcher?
    /// WSOLA (`fastest`), or nil.
    let wsola: WSOLAStretcher?
    /// WSOLA's pitch shift (`fastest`), or nil.
    let shifter: WSOLAPitchShifter?
    /// Offline file renders with `finer` and two or more channels: ``stretcher`` is channel 0's
    /// mono stretcher, these are those of channels 1… with the blocks handed to them.
    let helperChannels: HelperChannels?
    /// Runs ``helperChannels``' jobs (one per block) beside the render thread; nil where the
    /// channels are not split, the graph renders on one thread, or the system refused a thread
    /// (the render thread then feeds them as it posts). A var for tests, which replace it
    /// between render calls.
    var channelHelper: RenderHelperThread?
    /// Blocks handed to ``helperChannels``: the next block's slot is this modulo its capacity.
    private var helperBlocksPosted = 0
    /// The helpers must start over with the next block they are given.
    private var helpersNeedPrime = true
    /// The pieces of the slice (start, length) whose channels 1… are still to be read from the
    /// helpers: they are read once per slice (or before the helpers start over), so the render
    /// thread collects the helper's jobs once per slice rather than once per block.
    private let deferredStarts: UnsafeMutablePointer<Int>
    private let deferredLengths: UnsafeMutablePointer<Int>
    private var deferredCount = 0
    /// One block of input, and its channel table.
    private let block: ChannelBufferStorage
    private let blockTable: UnsafeMutablePointer<UnsafePointer<Float>>
    /// Rubberband must start over (at start, after bypass).
    private var needsPrime = true
    /// Output frames rendered since start: `bypass` is read where this is a multiple of
    /// ``TimePitchNode/blockSize`` and holds for that block of output.
    private var outputFrame: Int64 = 0
    /// Whether the current output block is bypassed.
    private var blockBypassed = false
    /// The pitch in cents for the whole run where it is fixed at initialize (`faster`: see
    /// ``TimePitchQuality/faster``), nil where it follows the parameter.
    private let fixedCents: Double?

    // MARK: Fixed at creation
    private let channelCount: Int
    private let rateIndex: Int
    private let pitchIndex: Int
    private let bypassIndex: Int

    init(node: TimePitchNode, maximumFramesPerSlice: Int) throws(AudioGraphError) {
        func index(_ name: String) -> Int { node.parameterIndex(of: ParameterAddress(name: name))! }
        rateIndex = index("rate")
        pitchIndex = index("pitch")
        bypassIndex = index("bypass")
        let format = node.outputFormats[0]
        channelCount = format.channelCount
        let p = node.parameters
        // Rubberband's pitch resampler runs always only where the pitch may move while playing
        // (see TimePitchStretcher's `consistentPitch`).
        let pitchMoves = node.livePitchChanges || p[pitchIndex].value != 0 || p[pitchIndex].automation != nil
        fixedCents = node.quality == .faster ? p[pitchIndex].value : nil
        let overlap = p[index("overlap")].value, quality = node.quality
        let initialRate = p[rateIndex].value, initialCents = p[pitchIndex].value
        let rubberband = { (channels: Int) in
            TimePitchStretcher(sampleRate: format.sampleRate, channelCount: channels, overlap: overlap, quality: quality,
                               consistentPitch: pitchMoves, blockSize: TimePitchNode.blockSize,
                               maximumOutputPerRead: maximumFramesPerSlice, rate: initialRate, cents: initialCents)
        }
        if node.quality == .fastest {
            stretcher = nil
            helperChannels = nil
            // The shifter reads WSOLA's output in pieces of its feed size.
            wsola = WSOLAStretcher(sampleRate: format.sampleRate, channelCount: format.channelCount,
                                   maximumOutputPerRead: max(maximumFramesPerSlice, WSOLAPitchShifter.feedFrames),
                                   maximumFeed: TimePitchNode.blockSize)
            shifter = try WSOLAPitchShifter(nodeID: node.id, channelCount: format.channelCount,
                                            maximumOutputPerRead: maximumFramesPerSlice)
        } else if node.splitsChannels && format.channelCount >= 2 {
            wsola = nil
            shifter = nil
            stretcher = rubberband(1)
            // A piece of output is at most one block of 256 frames: at most 64 + 40 blocks fed.
            let channels = HelperChannels(stretchers: (1..<format.channelCount).map { _ in rubberband(1) }, capacity: 128)
            helperChannels = channels
        } else {
            wsola = nil
            shifter = nil
            helperChannels = nil
            stretcher = rubberband(format.channelCount)
        }
        // Pieces end at the output's 256-frame block boundaries: at most this many per slice.
        let pieces = maximumFramesPerSlice / TimePitchNode.blockSize + 2
        deferredStarts = .allocate(capacity: pieces)
        deferredLengths = .allocate(capacity: pieces)
        block = ChannelBufferStorage(channelCount: format.channelCount, capacity: TimePitchNode.blockSize)
        blockTable = .allocate(capacity: max(1, format.channelCount))
        for c in 0..<format.channelCount { (blockTable + c).initialize(to: UnsafePointer(block.list.channel(c))) }
        super.init(nodeID: node.id, outputFormats: node.outputFormats, maximumFramesPerSlice: maximumFramesPerSlice,
                   parameters: node.parameters)
    }

    deinit {
        blockTable.deallocate()
        deferredStarts.deallocate()
        deferredLengths.deallocate()
    }

    /// Starts the helper thread of channels 1… when the graph renders on more than one thread
    /// (offline: the render may wait for it), stops it at 1; the render thread then feeds those
    /// channels itself, the same bits. Every posted job is collected within each render call,
    /// so the helper may come or go between calls.
    override var usesRenderThreads: Bool { helperChannels != nil }

    override func renderThreadCountDidChange(_ count: Int) {
        guard let channels = helperChannels, count > 1 else {
            channelHelper = nil
            return
        }
        guard channelHelper == nil else { return }
        // No thread (the system refuses one): the render thread feeds the channels as it posts.
        channelHelper = try? RenderHelperThread(name: "ag-timepitch", capacity: channels.capacity) { slot in
            channels.feed(slot)
        }
    }

    override func start(atSampleTime sampleTime: Int64) {
        super.start(atSampleTime: sampleTime)
        needsPrime = true
        outputFrame = 0
        shifter?.prime(silentHistory: true)
    }

    /// Fills the input block from the input's own timeline (silence where there is none).
    @inline(__always)
    private func fillBlock(_ inputs: RenderInputs) {
        let b = TimePitchNode.blockSize
        var done = 0
        while done < b {
            let m = min(b - done, maximumFramesPerSlice)
            let input = inputs.pull(0, frameCount: m)
            for c in 0..<channelCount { InputBuffer.copyChannel(c, of: input, to: block.list.channel(c) + done, count: m) }
            done += m
        }
        // rubberband never sees NaN or infinity: it would spread them through its phase vocoder
        // and print a warning per analysis frame (13,640 lines for 0.5 s of NaN, issue 22).
        for c in 0..<channelCount { NonFiniteSamples.replaceWithSilence(block.list.channel(c), count: b) }
    }

    override func render(context: RenderContext, inputs: RenderInputs) {
        let n = context.frameCount
        let out = outputs[0]
        let rate = parameterValues(rateIndex, context)
        let pitch = parameterValues(pitchIndex, context)
        let bypass = parameterValues(bypassIndex, context)
        let b = TimePitchNode.blockSize
        // In pieces that end at the output's block boundaries, where `bypass` is read: bypass
        // automation lands on the same frames whatever the slice size.
        var s = 0
        while s < n {
            let into = Int(outputFrame % Int64(b))
            if into == 0 { blockBypassed = bypass[s] >= 0.5 }
            let e = min(n, s + b - into)
            if blockBypassed {
                // 1:1 on the input's own timeline; rubberband starts over when bypass ends.
                needsPrime = true
                let input = inputs.pull(0, frameCount: e - s)
                for c in 0..<out.channelCount {
                    InputBuffer.copyChannel(c, of: input, to: out.channel(c) + s, count: e - s)
                }
                shifter?.remember(out, at: s, frameCount: e - s)
            } else if let wsola, let shifter {
                renderWSOLA(wsola, shifter, from: s, to: e, atBlockStart: into == 0, rate: rate, pitch: pitch, inputs: inputs)
            } else if let stretcher {
                renderStretched(stretcher, from: s, to: e, rate: rate, pitch: pitch, inputs: inputs)
            }
            outputFrame += Int64(e - s)
            s = e
        }
        readDeferredChannels()
        outputIsSilent[0] = ChannelPointers.isAllZero(out, frameCount: n)
    }

    /// Output frames `s..<e` of the slice from rubberband. Real-time safe.
    @inline(__always)
    private func renderStretched(_ stretcher: TimePitchStretcher, from s: Int, to e: Int, rate: ParameterValues,
                                 pitch: ParameterValues, inputs: RenderInputs) {
        let out = outputs[0]
        let length = e - s
        if needsPrime {
            readDeferredChannels()   // before the helpers start over and drop what they hold
            stretcher.prime(rate: Double(rate[s]), cents: fixedCents ?? Double(pitch[s]))
            needsPrime = false
            helpersNeedPrime = true
        }
        // Each block's ratios are the parameters at the output frame where its output begins
        // (the FIFO's level): the same frames whatever the slice size.
        var feeds = 0
        let maximumFeeds = 64 + (length * 40) / TimePitchNode.blockSize
        while stretcher.level < length && feeds < maximumFeeds {
            let at = s + stretcher.level
            let r = Double(rate[at]), cents = fixedCents ?? Double(pitch[at])
            stretcher.setRatios(rate: r, cents: cents)
            fillBlock(inputs)
            if let helperChannels {
                // Channels 1… to the helper first, so that it runs while channel 0 runs here (the
                // slot must be free: its job run).
                if let channelHelper, channelHelper.isFull { channelHelper.collect() }
                let slot = helperBlocksPosted % helperChannels.capacity
                for c in 1..<channelCount {
                    helperChannels.input(slot: slot, channel: c - 1).update(from: block.list.channel(c), count: TimePitchNode.blockSize)
                }
                helperChannels.setRatios(slot: slot, rate: r, cents: cents, prime: helpersNeedPrime)
                helperBlocksPosted += 1
                if let channelHelper { channelHelper.post(slot) } else { helperChannels.feed(slot) }
                helpersNeedPrime = false
            }
            stretcher.process(blockTable, frameCount: TimePitchNode.blockSize)
            feeds += 1
        }
        if helperChannels != nil {
            readMono(stretcher, into: out.channel(0) + s, length: length)
            deferredStarts[deferredCount] = s
            deferredLengths[deferredCount] = length
            deferredCount += 1
            return
        }
        let got = min(length, stretcher.level)
        stretcher.read(into: out, at: s, frameCount: got)
        if got < length {
            for c in 0..<out.channelCount { (out.channel(c) + s + got).update(repeating: 0, count: length - got) }
        }
    }

    /// Collects the helper's jobs and reads channels 1… of the deferred pieces, in order.
    @inline(__always)
    private func readDeferredChannels() {
        guard let helperChannels, deferredCount > 0 else { return }
        channelHelper?.collect()
        let out = outputs[0]
        let helpers = helperChannels.stretchers
        for piece in 0..<deferredCount {
            var k = 0
            while k < helpers.count && k + 1 < out.channelCount {
                readMono(helpers[k], into: out.channel(k + 1) + deferredStarts[piece], length: deferredLengths[piece])
                k += 1
            }
        }
        deferredCount = 0
    }

    /// `length` frames of a mono stretcher's output (silence for what it does not have yet).
    @inline(__always)
    private func readMono(_ stretcher: TimePitchStretcher, into destination: UnsafeMutablePointer<Float>, length: Int) {
        let got = min(length, stretcher.level)
        stretcher.read(channel0Into: destination, frameCount: got)
        if got < length { (destination + got).update(repeating: 0, count: length - got) }
    }

    /// Output frames `s..<e` of the slice from WSOLA. While the pitch is 0 (and has been since
    /// the last prime) WSOLA's output is the node's: each segment's rate is `rate` at the output
    /// frame where the segment begins (the FIFO's level), its input fed in blocks of
    /// ``TimePitchNode/blockSize`` frames. From the first output block (`atBlockStart`) whose
    /// `pitch` is not 0, the shifter resamples it (``WSOLAPitchShifter``): each block of its
    /// output takes `rate` and `pitch` at the frame where it begins, WSOLA running at
    /// `rate / p` meanwhile. The same frames whatever the slice size. Real-time safe.
    @inline(__always)
    private func renderWSOLA(_ wsola: WSOLAStretcher, _ shifter: WSOLAPitchShifter, from s: Int, to e: Int, atBlockStart: Bool,
                             rate: ParameterValues, pitch: ParameterValues, inputs: RenderInputs) {
        let out = outputs[0]
        let length = e - s
        if needsPrime {
            wsola.prime()
            shifter.prime(silentHistory: false)
            needsPrime = false
        }
        if !shifter.isShifting && atBlockStart && pitch[s] != 0 && !pitch[s].isNaN {
            shifter.start(cents: Double(pitch[s]))
        }
        guard shifter.isShifting else {
            while wsola.level < length {
                wsola.setRate(Double(rate[s + wsola.level]))
                makeSegment(wsola, inputs)
            }
            wsola.read(into: out, at: s, frameCount: length)
            shifter.remember(out, at: s, frameCount: length)
            return
        }
        while shifter.level < length {
            let at = s + shifter.level
            let cents = Double(pitch[at])
            wsola.setRate(Double(rate[at]) / WSOLAPitchShifter.pitchRatio(cents: cents))
            shifter.makeBlock(cents: cents) { interleaved, count in
                while wsola.level < count { makeSegment(wsola, inputs) }
                wsola.read(interleavedInto: interleaved, frameCount: count)
            }
        }
        shifter.read(into: out, at: s, frameCount: length)
    }

    /// Feeds WSOLA the input its next segment needs and makes it. Real-time safe.
    @inline(__always)
    private func makeSegment(_ wsola: WSOLAStretcher, _ inputs: RenderInputs) {
        while !wsola.hasInputForNextSegment {
            fillBlock(inputs)
            wsola.feed(blockTable, frameCount: TimePitchNode.blockSize)
        }
        wsola.makeSegment()
    }
}

extension TimePitchKernel {
    /// The mono stretchers of channels 1… in a split render, and the ring of blocks the render
    /// thread hands them: slot `i` holds a block of channels 1… (``TimePitchNode/blockSize``
    /// frames each) and its ratios. One ``RenderHelperThread`` job per block, its argument the
    /// slot: ``feed(_:)``.
    ///
    /// Thread safety: the render thread writes a slot (``input(slot:channel:)``,
    /// ``setRatios(slot:rate:cents:prime:)``) before posting its job and not again before the
    /// job has run; ``feed(_:)`` runs on whichever thread runs the job (the helper's hand-off
    /// orders the memory). Allocates nothing after init.
    final class HelperChannels: @unchecked Sendable {
        /// Mono stretchers, for channels 1, 2, … in order.
        let stretchers: [TimePitchStretcher]
        /// Slots in the ring (the helper's capacity: blocks posted and not yet fed).
        let capacity: Int
        private let blocks: ChannelBufferStorage
        private let rates: UnsafeMutablePointer<Double>
        private let cents: UnsafeMutablePointer<Double>
        private let primes: UnsafeMutablePointer<Bool>
        /// One pointer per stretcher: its channel's block.
        private let tables: UnsafeMutablePointer<UnsafePointer<Float>>

        /// A ring of `capacity` slots for `stretchers` (channels 1… in order). Control thread.
        init(stretchers: [TimePitchStretcher], capacity: Int) {
            self.stretchers = stretchers
            self.capacity = capacity
            let channels = max(1, stretchers.count), b = TimePitchNode.blockSize
            blocks = ChannelBufferStorage(channelCount: channels, capacity: capacity * b)
            rates = .allocate(capacity: capacity)
            rates.initialize(repeating: 1, count: capacity)
            cents = .allocate(capacity: capacity)
            cents.initialize(repeating: 0, count: capacity)
            primes = .allocate(capacity: capacity)
            primes.initialize(repeating: false, count: capacity)
            tables = .allocate(capacity: channels)
            for k in 0..<channels { (tables + k).initialize(to: UnsafePointer(blocks.list.channel(k))) }
        }

        deinit {
            rates.deallocate(); cents.deallocate(); primes.deallocate(); tables.deallocate()
        }

        /// Where `slot`'s block of channel `1 + channel` goes. Render thread.
        @inline(__always)
        func input(slot: Int, channel: Int) -> UnsafeMutablePointer<Float> {
            blocks.list.channel(channel) + slot * TimePitchNode.blockSize
        }

        /// The ratios `slot`'s block is stretched at (`prime`: the stretchers start over first).
        /// Render thread.
        @inline(__always)
        func setRatios(slot: Int, rate: Double, cents: Double, prime: Bool) {
            rates[slot] = rate
            self.cents[slot] = cents
            primes[slot] = prime
        }

        /// The job: feeds `slot`'s block to the stretchers. Real-time safe.
        @inline(__always)
        func feed(_ slot: Int) {
            for k in 0..<stretchers.count {
                let s = stretchers[k]
                if primes[slot] { s.prime(rate: rates[slot], cents: cents[slot]) }
                s.setRatios(rate: rates[slot], cents: cents[slot])
                tables[k] = UnsafePointer(blocks.list.channel(k) + slot * TimePitchNode.blockSize)
                s.process(tables + k, frameCount: TimePitchNode.blockSize)
            }
        }
    }
}
