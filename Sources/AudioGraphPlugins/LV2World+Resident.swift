// Plugin binaries linking Qt keep one resident instance for the life of the process, so their process-wide Qt state is never torn down.
import Glibc
import AudioGraphRealtime

extension LV2World {
    /// The resident instance of each plugin binary that links Qt, by the binary's path; never
    /// freed. Its lock is held while one is made, so two threads never make two.
    private static let residents = ControlLock<[String: LV2Instance]>([:])
    /// Whether the binary at a path links Qt (its ELF `DT_NEEDED` list), by path.
    private static let linksQtByPath = ControlLock<[String: Bool]>([:])

    /// Makes, the first time a plugin whose binary links Qt is instantiated, one more instance
    /// of it that is never freed (nor activated, nor run).
    ///
    /// Qt-based plugins keep process-wide state in their binary, shared by their instances and
    /// torn down with the last one: synthv1 (and its siblings samplv1, drumkv1, padthv1) creates
    /// a `QApplication` and one scheduler `QThread` with its first instance and deletes both when
    /// its last instance is freed. synthv1 0.9.29 deletes the scheduler thread without waiting
    /// for it when the thread has been started but has not yet run (its `run` sets the flag the
    /// destructor waits on); Qt then ends the process with "QThread: Destroyed while thread is
    /// still running". On a busy machine a freshly started thread usually has not run yet, so a
    /// host that makes and frees an instance (validation, a render, a test) aborted. Keeping the
    /// binary's instance count above zero from the first instance on means that state is made
    /// once, on the first instantiating thread, and never deleted: the scheduler thread is
    /// never destroyed, the `QApplication` never deleted from another thread or re-created, and
    /// lilv never unloads the binary (nor Qt with it). It costs one idle instance (and its
    /// worker thread, if it needs one) per such binary. A binary reaching Qt only through
    /// another library is not detected.
    ///
    /// Thread safety: control threads; serialised by the residents' lock.
    func keepResidentInstanceIfQt(uri: String, info: LV2PluginInfo, sampleRate: Double, maximumFrames: Int) throws(LV2Error) {
        guard let path = binaryPath(uri: uri), Self.linksQt(binary: path) else { return }
        let failure = Self.residents.withLock { residents -> LV2Error? in
            guard residents[path] == nil else { return nil }
            do throws(LV2Error) {
                residents[path] = try makeInstance(uri: uri, info: info, sampleRate: sampleRate, maximumFrames: maximumFrames)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Whether the binary at `path` links a Qt library (a `DT_NEEDED` entry starting `libQt`).
    /// Control threads; remembered per path.
    static func linksQt(binary path: String) -> Bool {
        if let known = linksQtByPath.withLock({ $0[path] }) { return known }
        let result = neededLibraries(ofBinary: path).contains { $0.hasPrefix("libQt") }
        linksQtByPath.withLock { $0[path] = result }
        return result
    }

    /// The `DT_NEEDED` names of the 64-bit little-endian ELF shared object at `path` (from its
    /// `SHT_DYNAMIC` section and the string table that section links), or [] when the file is
    /// unreadable or not such an object. Reads a private read-only mapping of the file.
    static func neededLibraries(ofBinary path: String) -> [String] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_size >= 64 else { return [] }
        let size = Int(status.st_size)
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else { return [] }
        defer { munmap(base, size) }
        let bytes = UnsafeRawBufferPointer(start: base, count: size)
        func integer<T: FixedWidthInteger & UnsignedInteger>(_ type: T.Type, at offset: Int) -> Int? {
            guard offset >= 0, offset <= size - MemoryLayout<T>.size else { return nil }
            return Int(exactly: T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self)))
        }
        // e_ident: "\u{7f}ELF", ELFCLASS64, ELFDATA2LSB.
        guard bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46, bytes[4] == 2, bytes[5] == 1,
              let sectionsAt = integer(UInt64.self, at: 0x28), let entrySize = integer(UInt16.self, at: 0x3A),
              let count = integer(UInt16.self, at: 0x3C), entrySize >= 64 else { return [] }
        // Elf64_Shdr: sh_type at 4, sh_offset at 24, sh_size at 32, sh_link at 40.
        func section(_ index: Int) -> (type: Int, offset: Int, size: Int, link: Int)? {
            let header = sectionsAt + index * entrySize
            guard let type = integer(UInt32.self, at: header + 4), let offset = integer(UInt64.self, at: header + 24),
                  let length = integer(UInt64.self, at: header + 32), let link = integer(UInt32.self, at: header + 40),
                  offset <= size, length <= size - offset else { return nil }
            return (type, offset, length, link)
        }
        for index in 0..<count {
            guard let dynamic = section(index), dynamic.type == 6 /* SHT_DYNAMIC */,
                  let strings = section(dynamic.link) else { continue }
            var names: [String] = []
            // Elf64_Dyn: d_tag, d_val; DT_NULL (0) ends the list, DT_NEEDED is 1.
            var entry = dynamic.offset
            while entry + 16 <= dynamic.offset + dynamic.size, let tag = integer(UInt64.self, at: entry), tag != 0 {
                if tag == 1, let name = integer(UInt64.self, at: entry + 8), name < strings.size {
                    let start = strings.offset + name, end = strings.offset + strings.size
                    if let nul = bytes[start..<end].firstIndex(of: 0) {
                        names.append(String(decoding: bytes[start..<nul], as: UTF8.self))
                    }
                }
                entry += 16
            }
            return names
        }
        return []
    }
}
