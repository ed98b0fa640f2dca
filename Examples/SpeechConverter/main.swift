// Microphone to speech: the input node's tap converted to 16 kHz Int16 mono with a converter and written to a file.
import AudioGraphKit

final class SpeechCapture {
    let engine = AudioEngine()
    let speechFormat = AudioFormat(commonFormat: .pcmFormatInt16, sampleRate: 16000, channels: 1, interleaved: true)!
    var converter: AudioConverter?
    var file: AudioFile?
    var framesWritten: AudioFramePosition = 0
    var buffersConverted = 0

    func start(writingTo url: URL) throws {
        let input = engine.inputNode
        let inputFormat = input.outputFormat(forBus: 0)
        converter = AudioConverter(from: inputFormat, to: speechFormat)
        file = try AudioFile(forWriting: url, settings: speechFormat.settings, commonFormat: .pcmFormatInt16, interleaved: true)
        input.installTap(onBus: 0, bufferSize: 4800, format: inputFormat) { buffer, _ in
            self.convert(buffer)
        }
        try engine.start()
    }

    func convert(_ buffer: AudioPCMBuffer) {
        guard let converter = converter else { return }
        let capacity = AudioFrameCount(speechFormat.sampleRate) * buffer.frameLength / AudioFrameCount(buffer.format.sampleRate)
        guard let convertedBuffer = AudioPCMBuffer(pcmFormat: speechFormat, frameCapacity: capacity) else { return }
        var error: NSError?
        var newBufferAvailable = true
        let inputCallback: AudioConverterInputBlock = { _, outStatus in
            if newBufferAvailable {
                outStatus.pointee = .haveData
                newBufferAvailable = false
                return buffer
            } else {
                outStatus.pointee = .noDataNow
                return nil
            }
        }
        let status = converter.convert(to: convertedBuffer, error: &error, withInputFrom: inputCallback)
        guard status != .error else {
            print("conversion failed: \(error?.localizedDescription ?? "unknown")")
            return
        }
        buffersConverted += 1
        guard convertedBuffer.frameLength > 0 else { return }
        do {
            try file?.write(from: convertedBuffer)
            framesWritten += AudioFramePosition(convertedBuffer.frameLength)
        } catch {
            print("write failed: \(error.localizedDescription)")
        }
    }

    func stop() {
        engine.inputNode.removeTap(onBus: 0)
        engine.stop()
        file = nil
        print("converted \(buffersConverted) buffers, wrote \(framesWritten) frames at 16 kHz")
    }
}

let url = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "speech.wav")
let seconds = CommandLine.arguments.count > 2 ? Double(CommandLine.arguments[2]) ?? 3 : 3
let capture = SpeechCapture()
try capture.start(writingTo: url)
Thread.sleep(forTimeInterval: seconds)
capture.stop()
