// AudioBufferList: C layout, sizes, allocation, and writing buffers through the collection view.
import AudioGraphKit
import Foundation
import XCTest

final class AudioBufferListTests: XCTestCase {
    func testLayoutMatchesCoreAudiosCStructs() {
        // struct AudioBufferList { UInt32 mNumberBuffers; AudioBuffer mBuffers[1]; }: 4 + 4 padding + 16.
        XCTAssertEqual(MemoryLayout<AudioBufferList>.size, 24)
        XCTAssertEqual(MemoryLayout<AudioBufferList>.offset(of: \.mBuffers), 8)
        XCTAssertEqual(AudioBufferList.sizeInBytes(maximumBuffers: 1), 24)
        XCTAssertEqual(AudioBufferList.sizeInBytes(maximumBuffers: 3), 56)
    }

    func testAllocateAndWriteThroughThePointer() throws {
        let list = AudioBufferList.allocate(maximumBuffers: 4)
        defer { free(list.unsafeMutablePointer) }
        XCTAssertEqual(list.count, 4)
        XCTAssertEqual(list.unsafePointer.pointee.mNumberBuffers, 4)
        for b in list {
            XCTAssertEqual(b.mNumberChannels, 0)
            XCTAssertEqual(b.mDataByteSize, 0)
            XCTAssertNil(b.mData)
        }
        var samples = [Float](repeating: 0, count: 4 * 8)
        try samples.withUnsafeMutableBufferPointer { memory in
            let base = try XCTUnwrap(memory.baseAddress)
            for i in list.indices {
                list[i] = AudioBuffer(mNumberChannels: 1, mDataByteSize: UInt32(8 * 4), mData: UnsafeMutableRawPointer(base + i * 8))
            }
            // Read back the raw bytes at C's offsets: buffer i at 8 + 16 i.
            let raw = UnsafeRawPointer(list.unsafePointer)
            for i in 0..<4 {
                XCTAssertEqual(raw.load(fromByteOffset: 8 + 16 * i, as: UInt32.self), 1)
                XCTAssertEqual(raw.load(fromByteOffset: 8 + 16 * i + 4, as: UInt32.self), 32)
                XCTAssertEqual(raw.load(fromByteOffset: 8 + 16 * i + 8, as: UnsafeMutableRawPointer.self),
                               UnsafeMutableRawPointer(base + i * 8))
            }
            // Writing samples through a buffer's mData lands in that channel.
            for (i, b) in list.enumerated() { b.mData!.assumingMemoryBound(to: Float.self)[3] = Float(i + 1) }
        }
        XCTAssertEqual((0..<4).map { samples[$0 * 8 + 3] }, [1, 2, 3, 4])
        XCTAssertEqual(list.map(\.mDataByteSize).reduce(0, +), 4 * 32)
        list.count = 2
        XCTAssertEqual(list.unsafeMutablePointer.pointee.mNumberBuffers, 2)
        XCTAssertEqual(Array(list).count, 2)
    }
}
