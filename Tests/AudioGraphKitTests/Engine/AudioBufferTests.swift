// AudioBuffer: CoreAudio's C layout and its initializers.
import AudioGraphKit
import XCTest

final class AudioBufferTests: XCTestCase {
    func testLayoutMatchesCoreAudiosCStruct() {
        // struct AudioBuffer { UInt32 mNumberChannels; UInt32 mDataByteSize; void *mData; } on LP64.
        XCTAssertEqual(MemoryLayout<AudioBuffer>.size, 16)
        XCTAssertEqual(MemoryLayout<AudioBuffer>.stride, 16)
        XCTAssertEqual(MemoryLayout<AudioBuffer>.offset(of: \.mNumberChannels), 0)
        XCTAssertEqual(MemoryLayout<AudioBuffer>.offset(of: \.mDataByteSize), 4)
        XCTAssertEqual(MemoryLayout<AudioBuffer>.offset(of: \.mData), 8)
    }

    func testInitializers() {
        let empty = AudioBuffer()
        XCTAssertEqual(empty.mNumberChannels, 0)
        XCTAssertEqual(empty.mDataByteSize, 0)
        XCTAssertNil(empty.mData)
        var samples = [Int16](repeating: 0, count: 12)
        samples.withUnsafeMutableBufferPointer { p in
            let b = AudioBuffer(p, numberOfChannels: 2)
            XCTAssertEqual(b.mNumberChannels, 2)
            XCTAssertEqual(b.mDataByteSize, 24)
            XCTAssertEqual(b.mData, UnsafeMutableRawPointer(p.baseAddress))
        }
    }
}
