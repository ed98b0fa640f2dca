// NodeTypeRegistry: registration by name, replacement, lookup and the sorted name list.
import AudioGraphCore
import Foundation
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
        for name in ["registryTestA", "registryTestB", "registryTestC", "registryTestD"] { NodeTypeRegistry.unregister(named: name) }
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

    func testATypeRegisteredByNameIsMadeOnItsFirstLookupOnly() {
        let made = ManagedAtomicCounter()
        let twoOutputs = descriptor("registryTestD", outputs: 2)
        NodeTypeRegistry.register(named: "registryTestD") {
            made.increment()
            return twoOutputs
        }
        XCTAssertTrue(NodeTypeRegistry.contains("registryTestD"))
        XCTAssertTrue(NodeTypeRegistry.names.contains("registryTestD"))
        XCTAssertEqual(made.value, 0, "registering, listing and asking whether it exists make nothing")
        XCTAssertEqual(NodeTypeRegistry.descriptor(named: "registryTestD")?.outputBusCount, 2)
        XCTAssertEqual(NodeTypeRegistry.descriptor(named: "registryTestD")?.name, "registryTestD")
        XCTAssertEqual(made.value, 1, "made once, then kept")
        NodeTypeRegistry.register(descriptor("registryTestD", outputs: 0))
        XCTAssertEqual(NodeTypeRegistry.descriptor(named: "registryTestD")?.outputBusCount, 0, "a later registration replaces it")
        XCTAssertFalse(NodeTypeRegistry.contains("registryTestNone"))
    }

    /// A module's list registered in one call: each type made on its first lookup only, and a
    /// list registered again replaces what was made (as one registration does).
    func testAListOfTypesIsRegisteredByNameInOneCall() {
        let made = ManagedAtomicCounter()
        let b = descriptor("registryTestB", outputs: 1), c = descriptor("registryTestC", outputs: 2)
        let list: [(name: String, make: @Sendable () -> NodeTypeDescriptor)] = [
            ("registryTestB", { made.increment(); return b }),
            ("registryTestC", { made.increment(); return c }),
        ]
        NodeTypeRegistry.register(named: list)
        XCTAssertTrue(NodeTypeRegistry.contains("registryTestB") && NodeTypeRegistry.contains("registryTestC"))
        XCTAssertEqual(made.value, 0)
        XCTAssertEqual(NodeTypeRegistry.descriptor(named: "registryTestC")?.outputBusCount, 2)
        XCTAssertEqual(made.value, 1, "only the type looked up is made")
        XCTAssertEqual(NodeTypeRegistry.descriptor(named: "registryTestC")?.outputBusCount, 2)
        XCTAssertEqual(made.value, 1, "and kept")
        NodeTypeRegistry.register(named: list)
        XCTAssertEqual(NodeTypeRegistry.descriptor(named: "registryTestC")?.name, "registryTestC")
        XCTAssertEqual(made.value, 2, "registered again: made again on the next lookup")
    }

    func testADescriptorWithoutPropertiesDecodesToNoOptions() {
        let d = descriptor("registryTestC", outputs: 1)
        XCTAssertEqual(d.propertyKeys, [])
        XCTAssertEqual(d.typedProperty("anything", NoNodeOptions()) as? Bool, nil)
        XCTAssertThrowsError(try d.makeNode(NodeBuildContext(id: "x", sampleRate: 48000, inputBusCount: 1, options: NoNodeOptions(),
                                                             rendersOffline: true)))
    }
}

/// A counter a registered maker may bump (makers are @Sendable).
private final class ManagedAtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
