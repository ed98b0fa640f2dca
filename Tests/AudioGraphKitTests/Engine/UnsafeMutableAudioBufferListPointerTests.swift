// UnsafeMutableAudioBufferListPointer: construction, count, subscripts and iteration over a list in memory.
import AudioGraphKit
import Foundation
import XCTest

final class UnsafeMutableAudioBufferListPointerTests: XCTestCase {
    func testPointerFromOptional() {
        XCTAssertNil(UnsafeMutableAudioBufferListPointer(nil as UnsafeMutablePointer<AudioBufferList>?))
        var one = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: 8, mData: nil))
        withUnsafeMutablePointer(to: &one) { p in
            let list = UnsafeMutableAudioBufferListPointer(p)
            XCTAssertEqual(list.count, 1)
            XCTAssertEqual(list[0].mNumberChannels, 2)
            list[0].mDataByteSize = 4
        }
        XCTAssertEqual(one.mBuffers.mDataByteSize, 4)
    }

    func testIterationSeesEveryBufferNotJustTheDeclaredOne() {
        let list = AudioBufferList.allocate(maximumBuffers: 3)
        defer { free(list.unsafeMutablePointer) }
        for i in 0..<3 { list[i].mNumberChannels = UInt32(i + 1) }
        XCTAssertEqual(list.map(\.mNumberChannels), [1, 2, 3])
        XCTAssertEqual(Array(list.reversed()).map(\.mNumberChannels), [3, 2, 1])
        XCTAssertEqual(list.unsafePointer.pointee.mBuffers.mNumberChannels, 1)
        list.count = 0
        XCTAssertTrue(list.isEmpty)
        var iterator = list.makeIterator()
        XCTAssertNil(iterator.next())
    }
}
