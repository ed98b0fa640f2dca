// UnsafeMutableAudioBufferListPointer.point(at:): a buffer list over the core's float channels.
import AudioGraphKit
import Foundation
import XCTest

final class UnsafeMutableAudioBufferListPointerChannelBufferListTests: XCTestCase {
    func testPointAtChannels() throws {
        let storage = ChannelBufferStorage(channelCount: 3, capacity: 100)
        let list = AudioBufferList.allocate(maximumBuffers: 4)
        defer { free(list.unsafeMutablePointer) }
        list.point(at: storage.list, frame: 10, frameCount: 32, maximumBuffers: 4)
        XCTAssertEqual(list.count, 3)
        XCTAssertEqual(list.unsafePointer.pointee.mNumberBuffers, 3)
        for c in 0..<3 {
            XCTAssertEqual(list[c].mNumberChannels, 1)
            XCTAssertEqual(list[c].mDataByteSize, 128)
            XCTAssertEqual(list[c].mData, UnsafeMutableRawPointer(storage.list.channel(c) + 10))
        }
        // A render block writing through the list writes the channels.
        for (c, buffer) in list.enumerated() { try XCTUnwrap(buffer.mData).assumingMemoryBound(to: Float.self)[0] = Float(c) + 0.5 }
        XCTAssertEqual((0..<3).map { storage.list.channel($0)[10] }, [0.5, 1.5, 2.5])
    }
}
