// What the engine tests share: a private PulseAudio server as the default one, and the programmer-error check.
import AudioGraphKit
import AudioGraphTesting
import Foundation
import XCTest

/// A test case whose tests run against a private PulseAudio server made the process's default
/// (its environment variables set for the test, restored after), as an application finds one.
class DefaultPulseServerTestCase: XCTestCase {
    var server: PulseTestServer!
    private var savedEnvironment: [String: String?] = [:]

    override func setUpWithError() throws {
        server = try PulseTestServer()
        for (key, value) in server.environment {
            savedEnvironment[key] = ProcessInfo.processInfo.environment[key]
            setenv(key, value, 1)
        }
    }

    override func tearDown() {
        for (key, value) in savedEnvironment {
            if let value { setenv(key, value, 1) } else { unsetenv(key) }
        }
        savedEnvironment = [:]
        server?.stop()
        server = nil
    }
}

/// Runs `body` in a child copy of test `test` (`Class/testMethod` of AudioGraphKitTests) and
/// checks that it stopped with exactly one `AudioEngine: ` line holding every piece of `expected`.
func assertEngineStops(_ test: String, expected: [String], file: StaticString = #filePath, line: UInt = #line,
                       _ body: () throws -> Void) throws {
    if TrapCheck.isChild {
        try body()
        return
    }
    let r = try TrapCheck.rerun("AudioGraphKitTests.\(test)")
    XCTAssertTrue(r.stoppedBySignal, "status \(r.status): \(r.standardError)", file: file, line: line)
    let lines = r.lines(containing: "AudioEngine: ")
    XCTAssertEqual(lines.count, 1, r.standardError, file: file, line: line)
    for piece in expected {
        XCTAssertTrue(lines.first?.contains(piece) == true, "\(piece) missing from: \(lines)", file: file, line: line)
    }
}

/// An engine in offline manual mode at 48 kHz stereo with `maximumFrameCount` 4096.
func makeManualEngine(format: AudioFormat? = nil, maximum: AudioFrameCount = 4096) throws -> AudioEngine {
    let engine = AudioEngine()
    try engine.enableManualRenderingMode(.offline, format: format ?? AudioFormat(standardFormatWithSampleRate: 48000, channels: 2)!, maximumFrameCount: maximum)
    return engine
}

/// A ``makeManualEngine(format:maximum:)`` engine playing `source` (a 440 Hz sine at 0.5 by
/// default) through `unit` into the main mixer; not started.
func makeManualEngine(through unit: AudioNode, from source: AudioNode = makeSineSource(frequency: 440)) throws -> AudioEngine {
    let engine = try makeManualEngine()
    engine.attach(source)
    engine.attach(unit)
    engine.connect(source, to: unit, format: nil)
    engine.connect(unit, to: engine.mainMixerNode, format: nil)
    return engine
}

/// Renders `count` frames in pieces of `piece` and returns each channel's samples.
func render(_ engine: AudioEngine, frames count: Int, piece: Int = 1000) throws -> [[Float]] {
    let format = engine.manualRenderingFormat
    let buffer = try XCTUnwrap(AudioPCMBuffer(pcmFormat: format, frameCapacity: AudioFrameCount(piece)))
    var out = [[Float]](repeating: [], count: Int(format.channelCount))
    var done = 0
    while done < count {
        let n = min(piece, count - done)
        XCTAssertEqual(try engine.renderOffline(AudioFrameCount(n), to: buffer), .success)
        XCTAssertEqual(Int(buffer.frameLength), n)
        for c in out.indices { out[c] += Array(UnsafeBufferPointer(start: buffer.floatChannelData![c], count: n)) }
        done += n
    }
    return out
}
