// NodeTypeRegistry: registration by name, replacement, lookup and the sorted name list.
import AudioGraphCore
import XCTest

final class NodeTypeRegistryTests: XCTestCase {
    /// A descriptor named `name` whose factory makes nothing useful (not called here).
    func descriptor(_ name: String, outputs: Int) -> NodeTypeDescriptor {
        NodeTypeDescriptor(name: name, kind: .effect, inputBuses: .fixed(1), outputBusCount: outputs) { context throws(AudioGraphError) in
            throw .nodeSetupFailed(node: context.id, reason: "not for rendering")
        }
    }

    override func tearDown() {
        // Registrations are process-wide: leave only the stock types for the other test classes.
        for name in ["registryTestA", "registryTestB", "registryTestC"] { NodeTypeRegistry.unregister(named: name) }
    }

    func testRegisteredTypesAreFoundByNameAndAReRegistrationReplaces() {
        XCTAssertNil(NodeTypeRegistry.descriptor(named: "registryTestA"))
        NodeTypeRegistry.register(descriptor("registryTestA", outputs: 1))
        NodeTypeRegistry.register(descriptor("registryTestB", outputs: 1))
        XCTAssertEqual(NodeTypeRegistry.descriptor(named: "registryTestA")?.outputBusCount, 1)
        NodeTypeRegistry.register(descriptor("registryTestA", outputs: 0))
        XCTAssertEqual(NodeTypeRegistry.descriptor(named: "registryTestA")?.outputBusCount, 0, "the second registration replaces the first")
        let names = NodeTypeRegistry.names
        XCTAssertEqual(names, names.sorted())
        XCTAssertTrue(names.contains("registryTestA") && names.contains("registryTestB"))
        XCTAssertEqual(names.filter { $0 == "registryTestA" }.count, 1)
    }

    func testADescriptorWithoutPropertiesDecodesToNoOptions() {
        let d = descriptor("registryTestC", outputs: 1)
        XCTAssertEqual(d.propertyKeys, [])
        XCTAssertEqual(d.typedProperty("anything", NoNodeOptions()) as? Bool, nil)
        XCTAssertThrowsError(try d.makeNode(NodeBuildContext(id: "x", sampleRate: 48000, inputBusCount: 1, options: NoNodeOptions(),
                                                             rendersOffline: true)))
    }
}
