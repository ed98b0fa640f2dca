// The parameter tables: every spec parameter with its unit, range and default, per-element rules.

import XCTest
@testable import AudioGraphDescription
import AudioGraphNodes

final class NodeSchemaTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    func info(_ type: NodeType, _ address: String, sampleRate: Double = 48000, inputs: Int = 1, bands: Int = 0) -> ParameterInfo? {
        NodeSchema.for(type).parameterInfo(for: ParameterAddress(address)!, sampleRate: sampleRate, inputBusCount: inputs, bandCount: bands)
    }

    func assertParameter(_ type: NodeType, _ address: String, _ unit: ParameterUnit, _ min: Double, _ max: Double, _ defaultValue: Double,
                         sampleRate: Double = 48000, inputs: Int = 1, bands: Int = 0, file: StaticString = #filePath, line: UInt = #line) {
        guard let info = info(type, address, sampleRate: sampleRate, inputs: inputs, bands: bands) else {
            return XCTFail("\(type) has no \(address)", file: file, line: line)
        }
        XCTAssertEqual(info.address.description, address, file: file, line: line)
        XCTAssertEqual(info.unit, unit, file: file, line: line)
        XCTAssertEqual(info.minValue, min, file: file, line: line)
        XCTAssertEqual(info.maxValue, max, file: file, line: line)
        XCTAssertEqual(info.defaultValue, defaultValue, file: file, line: line)
    }

    func testSpecParameterTable() {
        assertParameter(.oscillator, "frequency", .hertz, 0, 22050, 440, sampleRate: 44100)
        assertParameter(.oscillator, "amplitude", .linearGain, 0, 1, 1)
        assertParameter(.player, "volume", .linearGain, 0, 1, 1)
        assertParameter(.mixer, "volume", .linearGain, 0, 4, 1)
        assertParameter(.mixer, "input.3.volume", .linearGain, 0, 4, 1, inputs: 4)
        assertParameter(.mixer, "input.3.pan", .pan, -1, 1, 0, inputs: 4)
        assertParameter(.mixer, "input.0.enable", .boolean, 0, 1, 1)
        assertParameter(.eq, "globalGain", .decibels, -96, 24, 0)
        assertParameter(.eq, "band.2.frequency", .hertz, 10, 48000, 1000, sampleRate: 96000, bands: 3)
        assertParameter(.eq, "band.0.gain", .decibels, -96, 24, 0, bands: 1)
        assertParameter(.eq, "band.0.q", .generic, 0.05, 100, 0.70710678, bands: 1)
        assertParameter(.eq, "band.0.bypass", .boolean, 0, 1, 0, bands: 1)
        assertParameter(.delay, "delayTime", .seconds, 0, 2, 1)
        assertParameter(.delay, "feedback", .percent, -100, 100, 50)
        assertParameter(.delay, "lowPassCutoff", .hertz, 10, 24000, 15000)
        assertParameter(.delay, "lowPassCutoff", .hertz, 10, 11025, 11025, sampleRate: 22050)
        assertParameter(.delay, "wetDryMix", .percent, 0, 100, 100)
        for axis in ["x", "y", "z"] {
            assertParameter(.environment, "listener.\(axis)", .meters, -1e6, 1e6, 0)
            assertParameter(.environment, "input.1.\(axis)", .meters, -1e6, 1e6, 0, inputs: 2)
        }
        for angle in ["yaw", "pitch", "roll"] { assertParameter(.environment, "listener.\(angle)", .degrees, -180, 180, 0) }
        assertParameter(.environment, "input.0.gain", .linearGain, 0, 4, 1)
        assertParameter(.environment, "input.0.occlusion", .decibels, -100, 0, 0)
        assertParameter(.environment, "input.0.obstruction", .decibels, -100, 0, 0)
        assertParameter(.environment, "input.0.reverbBlend", .generic, 0, 1, 0)
    }

    func testPerElementParametersExistOnlyForExistingElements() {
        XCTAssertNil(info(.mixer, "input.2.volume", inputs: 2))
        XCTAssertNotNil(info(.mixer, "input.1.volume", inputs: 2))
        XCTAssertNil(info(.eq, "band.0.gain", bands: 0))
        XCTAssertNil(info(.mixer, "output.0.volume"))
        XCTAssertNil(info(.environment, "listener.0.x"))
        XCTAssertNil(info(.delay, "band.0.gain", bands: 1))
        XCTAssertNil(info(.oscillator, "input.0.frequency"))
    }

    func testParameterInfosEnumeratesEveryElement() {
        let mixer = NodeSchema.for(.mixer).parameterInfos(sampleRate: 48000, inputBusCount: 3, bandCount: 0)
        XCTAssertEqual(mixer.map(\.address.description), ["volume", "input.0.volume", "input.0.pan", "input.0.enable",
                                                          "input.1.volume", "input.1.pan", "input.1.enable",
                                                          "input.2.volume", "input.2.pan", "input.2.enable"])
        XCTAssertEqual(NodeSchema.for(.environment).parameterInfos(sampleRate: 48000, inputBusCount: 2, bandCount: 0).count, 12 + 2 * 15)
        XCTAssertEqual(NodeSchema.for(.eq).parameterInfos(sampleRate: 48000, inputBusCount: 1, bandCount: 2).count, 1 + 2 * 4)
        for type in [NodeType.converter, .output, .genericOutput, .input] {
            XCTAssertEqual(NodeSchema.for(type).parameterInfos(sampleRate: 48000, inputBusCount: 1, bandCount: 0), [])
        }
    }

    func testBusesAndKinds() {
        XCTAssertEqual(NodeSchema.for(.mixer).inputBuses.maximum, 1024)
        XCTAssertTrue(NodeSchema.for(.environment).inputBuses.isVariable)
        XCTAssertFalse(NodeSchema.for(.eq).inputBuses.isVariable)
        XCTAssertEqual(NodeSchema.for(.output).outputBusCount, 0)
        XCTAssertEqual(NodeSchema.for(.genericOutput).outputBusCount, 0)
        XCTAssertEqual(NodeSchema.for(.player).inputBuses.defaultCount, 0)
        XCTAssertEqual(NodeType.allCases.prefix(16).map { NodeSchema.for($0).kind },   // the stock list; registered types follow
                       [.source, .source, .source, .mixer, .mixer, .effect, .effect, .effect, .converter, .output, .output, .effect, .effect, .effect, .effect, .effect])
        XCTAssertEqual(NodeType.allCases.filter { NodeSchema.for($0).convertsInputs }, [.mixer, .environment, .converter, .genericOutput])
    }

    func testTimePitchParametersAreTheSpecs() {
        XCTAssertEqual(info(.timePitch, "rate")?.minValue, 1.0 / 32)
        XCTAssertEqual(info(.timePitch, "rate")?.maxValue, 32)
        XCTAssertEqual(info(.timePitch, "rate")?.defaultValue, 1)
        XCTAssertEqual(info(.timePitch, "pitch")?.minValue, -2400)
        XCTAssertEqual(info(.timePitch, "pitch")?.maxValue, 2400)
        XCTAssertEqual(info(.timePitch, "overlap")?.minValue, 3)
        XCTAssertEqual(info(.timePitch, "overlap")?.maxValue, 32)
        XCTAssertEqual(info(.timePitch, "overlap")?.defaultValue, 8)
        XCTAssertEqual(info(.timePitch, "bypass")?.maxValue, 1)
        XCTAssertNil(info(.timePitch, "wetDryMix"))
        XCTAssertEqual(NodeSchema.for(.timePitch).propertyKeys, ["quality"])
    }

    func testSmoothedParameters() {
        XCTAssertEqual(info(.delay, "delayTime")?.smoothsSteps, true)
        XCTAssertEqual(info(.eq, "band.0.frequency", bands: 1)?.smoothsSteps, true)
        XCTAssertEqual(info(.mixer, "volume")?.smoothsSteps, false)
    }
}

/// The reverb and varispeed rows of the spec (graph-format.md).
final class NodeSchemaUnitsTests: XCTestCase {
    override class func setUp() { registerNodeTypes() }

    func testReverbAndVarispeedParametersAreTheSpecs() {
        let reverb = NodeSchema.for(.reverb).parameterInfos(sampleRate: 48000, inputBusCount: 1, bandCount: 0)
        XCTAssertEqual(reverb.map(\.address.name), ["wetDryMix", "bypass"])
        XCTAssertEqual([reverb[0].minValue, reverb[0].maxValue, reverb[0].defaultValue], [0, 100, 50])
        let varispeed = NodeSchema.for(.varispeed).parameterInfos(sampleRate: 48000, inputBusCount: 1, bandCount: 0)
        XCTAssertEqual(varispeed.map(\.address.name), ["rate", "bypass"])
        XCTAssertEqual([varispeed[0].minValue, varispeed[0].maxValue, varispeed[0].defaultValue], [0.25, 4, 1])
        XCTAssertEqual(NodeSchema.for(.reverb).propertyKeys, ["preset"])
    }
}
