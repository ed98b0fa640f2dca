// What the command-line tests share: temporary folders removed at teardown, a folder's file names.
import AudioGraphTesting
import Foundation
import XCTest

extension XCTestCase: TeardownRegistering {}

/// The names in `directory`, sorted (what a command left behind).
func fileNames(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}
