// The host's URI↔URID table behind the urid:map and urid:unmap features plugins receive.
import CLilv
import Glibc
import AudioGraphCore
import AudioGraphRealtime
import Synchronization

/// A thread-safe table mapping URIs to URIDs (1, 2, 3, ... in order of first use) and back,
/// shared by every instance of one ``LV2World`` so that a URID means the same URI to all of them.
///
/// The `LV2_URID_Map` and `LV2_URID_Unmap` structs handed to plugins point at this table; they
/// stay valid as long as the table (the world, which every ``LV2Instance`` keeps alive). The
/// strings `unmap` returns are copies the table owns and frees only when it goes.
///
/// Thread safety: `map`/`unmap` may be called from any thread; they hold a lock (a `ControlLock`: a
/// plugin that maps inside `run` is reported by the render-thread lock check)
/// and `map` allocates when it meets a new URI, so they are not real-time safe. Plugins call
/// them at instantiate and in non-real-time calls, as the urid spec asks; the host's render
/// path never calls them (it maps every URID it needs at initialize).
package final class LV2URIDMap: @unchecked Sendable {
    private struct Table {
        var ids: [String: UInt32] = [:]
        /// `uris[id - 1]` is the C string of URID `id`, owned by the table.
        var uris: [UnsafeMutablePointer<CChar>] = []
    }
    // MARK: Shared (guarded by the lock)
    private let table = ControlLock(Table())

    // MARK: Fixed at creation (handed to plugins; point back at self)
    /// The `urid:map` feature data.
    let mapFeature: UnsafeMutablePointer<LV2_URID_Map>
    /// The `urid:unmap` feature data.
    let unmapFeature: UnsafeMutablePointer<LV2_URID_Unmap>

    /// An empty table.
    package init() {
        mapFeature = .allocate(capacity: 1)
        unmapFeature = .allocate(capacity: 1)
        let handle = Unmanaged.passUnretained(self).toOpaque()
        mapFeature.initialize(to: LV2_URID_Map(handle: handle, map: { handle, uri in
            guard let handle, let uri else { return 0 }
            return Unmanaged<LV2URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
        }))
        unmapFeature.initialize(to: LV2_URID_Unmap(handle: handle, unmap: { handle, urid in
            guard let handle else { return nil }
            return Unmanaged<LV2URIDMap>.fromOpaque(handle).takeUnretainedValue().unmapCString(urid)
        }))
    }

    deinit {
        mapFeature.deallocate()
        unmapFeature.deallocate()
        table.withLock { $0.uris.forEach { free($0) } }
    }

    /// The URID of `uri`, a new one (the next integer) the first time; never 0. Any thread; locks.
    package func map(_ uri: String) -> UInt32 {
        table.withLock { t in
            if let id = t.ids[uri] { return id }
            t.uris.append(strdup(uri)!)
            let id = UInt32(t.uris.count)
            t.ids[uri] = id
            return id
        }
    }

    /// The URI of `urid`, or nil for 0 or an id never given out. Any thread; locks.
    package func unmap(_ urid: UInt32) -> String? {
        unmapCString(urid).map { String(cString: $0) }
    }

    private func unmapCString(_ urid: UInt32) -> UnsafePointer<CChar>? {
        table.withLock { t in
            guard urid >= 1, Int(urid) <= t.uris.count else { return nil }
            return UnsafePointer(t.uris[Int(urid) - 1])
        }
    }
}
