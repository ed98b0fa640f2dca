// An open sound file read piece by piece at any frame (WAVFileReader, or libsndfile sf_seek + sf_readf_float), for streaming.
import CSndFile

/// A sound file kept open and read in pieces at arbitrary frames into memory the caller owns
/// (cf. miniaudio's `ma_decoder_seek_to_pcm_frame` + `ma_decoder_read_pcm_frames`): no
/// allocation per read, a seek only when the read does not continue where the last one ended.
///
/// Thread safety: not shared. Opened on a control thread, then used by one thread at a time
/// (the player's disk-reader thread, `audiograph meter FILE`); every call does I/O, never on
/// the render thread.
package final class SeekableAudioFileReader {
    /// Where the file is.
    package let path: String
    /// Rate, channels and length of the file.
    package let info: AudioFileInfo
    /// The sample type the file stores: 16/24/32-bit integers or 32/64-bit floats as stored;
    /// float32 for every other encoding (8-bit, µ-law, Vorbis, ...), which libsndfile decodes
    /// to floats.
    package let storedSampleType: SampleType

    // MARK: Owner thread only
    /// The reader of a plain WAV file (``WAVFileReader``), else nil and ``file`` is libsndfile's.
    private let wav: WAVFileReader?
    private var file: OpaquePointer?
    /// The frame the next `sf_readf_float` reads from (-1: unknown, seek first).
    private var filePosition: Int64 = 0

    /// Opens `path` for reading (a regular file only: FIFOs, devices and folders are refused).
    package init(path: String) throws(AudioFileError) {
        self.path = path
        if let wav = try AudioFileReader.nativeWAV(path) {
            self.wav = wav
            info = wav.info
            storedSampleType = wav.sampleType
            return
        }
        wav = nil
        var sfinfo = SF_INFO()
        let f = try AudioFileReader.openWithLibsndfile(path, &sfinfo)
        file = f
        info = AudioFileInfo(sampleRate: Double(sfinfo.samplerate), channels: Int(sfinfo.channels), frames: sfinfo.frames)
        switch sfinfo.format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_16): storedSampleType = .int16
        case Int32(SF_FORMAT_PCM_24): storedSampleType = .int24
        case Int32(SF_FORMAT_PCM_32): storedSampleType = .int32
        case Int32(SF_FORMAT_DOUBLE): storedSampleType = .float64
        default: storedSampleType = .float32
        }
    }

    deinit { if let file { sf_close(file) } }

    /// Reads up to `frameCount` interleaved frames starting at file frame `frame` into
    /// `destination` (room for `frameCount * info.channels` floats). Returns the frames read:
    /// fewer than asked at the end of the file, and -1 when seeking or reading failed (the
    /// position is then unknown and the next read seeks again). Allocates nothing.
    package func read(into destination: UnsafeMutablePointer<Float>, atFrame frame: Int64, frameCount: Int) -> Int {
        if let wav { return wav.read(into: destination, atFrame: frame, frameCount: frameCount) }
        guard let file, frameCount > 0 else { return 0 }
        if frame != filePosition {
            guard sf_seek(file, frame, SEEK_SET) == frame else {
                filePosition = -1
                return -1
            }
            filePosition = frame
        }
        let got = sf_readf_float(file, destination, Int64(frameCount))
        guard got >= 0 else {
            filePosition = -1
            return -1
        }
        filePosition += got
        return Int(got)
    }
}
