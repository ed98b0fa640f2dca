// AudioPlot's cairo drawing: frame, title, axes with tick labels, and the three kinds of content.
import AudioGraphCore
import AudioGraphNodes
import CCairo
#if canImport(Glibc)
import Glibc
#endif

extension AudioPlot {
    /// White background and the title, centred above the plot area.
    static func drawFrame(_ cr: OpaquePointer, width: Int, height: Int, title: String) {
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_paint(cr)
        cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, 14)
        cairo_set_source_rgb(cr, 0, 0, 0)
        text(cr, title, x: Double(width) / 2, y: 20, align: 0.5)
        cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, 11)
    }

    /// Min/max envelope per column, one lane per channel, amplitude ticks and a time axis.
    static func drawWaveform(_ cr: OpaquePointer, lanes: [[WaveformPoint]], info: AudioFileInfo, width: Int, height: Int) {
        let a = plotArea(width: width, height: height)
        let laneHeight = (Double(a.height) - laneGap * Double(max(0, lanes.count - 1))) / Double(max(1, lanes.count))
        for (index, points) in lanes.enumerated() {
            let top = Double(a.y) + (laneHeight + laneGap) * Double(index)
            func y(_ v: Float) -> Double { top + (1 - Double(max(-1, min(1, v)))) / 2 * laneHeight }
            // Grid: −1, 0, 1.
            for v: Float in [1, 0, -1] {
                gridLine(cr, x0: Double(a.x), y0: y(v), x1: Double(a.x + a.width), y1: y(v))
                cairo_set_source_rgb(cr, 0, 0, 0)
                text(cr, v == 0 ? "0" : (v > 0 ? "1" : "-1"), x: Double(a.x) - 6, y: y(v) + 4, align: 1)
            }
            cairo_set_source_rgb(cr, 0.1, 0.3, 0.75)
            cairo_set_line_width(cr, 1)
            for (i, p) in points.enumerated() {
                let x = Double(a.x + i) + 0.5
                cairo_move_to(cr, x, y(p.maximum))
                cairo_line_to(cr, x, max(y(p.minimum), y(p.maximum) + 1))
            }
            cairo_stroke(cr)
        }
        timeAxis(cr, seconds: Double(info.frames) / info.sampleRate, width: width, height: height)
        border(cr, width: width, height: height)
    }

    /// Pixels between the waveform's channel lanes (room for their amplitude labels).
    static let laneGap = 14.0

    /// The averaged spectrum's curve over log frequency and dB grids.
    static func drawSpectrum(_ cr: OpaquePointer, decibels: [Double], sampleRate: Double, width: Int, height: Int) {
        let a = plotArea(width: width, height: height)
        func y(_ db: Double) -> Double { Double(a.y) + Double(a.height) * (db / floorDecibels) }
        var db = 0.0
        while db >= floorDecibels {
            gridLine(cr, x0: Double(a.x), y0: y(db), x1: Double(a.x + a.width), y1: y(db))
            cairo_set_source_rgb(cr, 0, 0, 0)
            text(cr, "\(Int(db))", x: Double(a.x) - 6, y: y(db) + 4, align: 1)
            db -= 20
        }
        frequencyAxis(cr, sampleRate: sampleRate, width: width, height: height, vertical: false)
        cairo_save(cr)
        cairo_rectangle(cr, Double(a.x), Double(a.y), Double(a.width), Double(a.height))
        cairo_clip(cr)
        cairo_set_source_rgb(cr, 0.75, 0.15, 0.1)
        cairo_set_line_width(cr, 1.5)
        let binHz = sampleRate / Double(2 * (decibels.count - 1))
        var started = false
        for k in 1..<decibels.count {
            let f = Double(k) * binHz
            guard f >= lowestFrequency * 0.9 else { continue }
            let x = self.x(frequency: f, sampleRate: sampleRate, width: width, height: height)
            if started { cairo_line_to(cr, x, y(decibels[k])) } else { cairo_move_to(cr, x, y(decibels[k])) }
            started = true
        }
        cairo_stroke(cr)
        cairo_restore(cr)
        cairo_set_source_rgb(cr, 0, 0, 0)
        text(cr, "dBFS", x: 8, y: Double(a.y) - 8, align: 0)
        border(cr, width: width, height: height)
    }

    /// The spectrogram's pixels (a colour per dB level), a log frequency axis and a time axis.
    static func drawSpectrogram(_ cr: OpaquePointer, columns: [[Double]], info: AudioFileInfo, width: Int, height: Int) {
        let a = plotArea(width: width, height: height)
        let image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(a.width), Int32(a.height))!
        defer { cairo_surface_destroy(image) }
        cairo_surface_flush(image)
        if let data = cairo_image_surface_get_data(image) {
            let stride = Int(cairo_image_surface_get_stride(image))
            let bins = (columns.first?.count ?? 2) - 1
            // The bin of each row, top row highest.
            let rowBins = (0..<a.height).map { row -> Int in
                let f = frequency(atLogPosition: 1 - (Double(row) + 0.5) / Double(a.height), sampleRate: info.sampleRate)
                return min(bins, max(0, Int((f / (info.sampleRate / 2) * Double(bins)).rounded())))
            }
            for (x, column) in columns.enumerated() where x < a.width {
                for row in 0..<a.height {
                    let pixel = UnsafeMutableRawPointer(data + row * stride + x * 4)
                    pixel.storeBytes(of: colour(level: 1 - column[rowBins[row]] / floorDecibels), as: UInt32.self)
                }
            }
            cairo_surface_mark_dirty(image)
        }
        cairo_set_source_surface(cr, image, Double(a.x), Double(a.y))
        cairo_paint(cr)
        frequencyAxis(cr, sampleRate: info.sampleRate, width: width, height: height, vertical: true)
        timeAxis(cr, seconds: Double(info.frames) / info.sampleRate, width: width, height: height)
        border(cr, width: width, height: height)
    }

    /// An opaque ARGB32 pixel of the colour map (black, purple, red, orange, pale yellow) at
    /// `level` 0...1.
    static func colour(level: Double) -> UInt32 {
        let stops: [(Double, Double, Double)] = [(0, 0, 4), (87, 16, 110), (188, 55, 84), (249, 142, 9), (252, 255, 164)]
        let t = max(0, min(1, level.isNaN ? 0 : level)) * Double(stops.count - 1)
        let i = min(stops.count - 2, Int(t))
        let f = t - Double(i)
        func mix(_ a: Double, _ b: Double) -> UInt32 { UInt32((a + (b - a) * f).rounded()) }
        let r = mix(stops[i].0, stops[i + 1].0), g = mix(stops[i].1, stops[i + 1].1), b = mix(stops[i].2, stops[i + 1].2)
        return 0xFF00_0000 | (r << 16) | (g << 8) | b
    }

    /// Ticks and labels of seconds under the plot area.
    static func timeAxis(_ cr: OpaquePointer, seconds: Double, width: Int, height: Int) {
        let a = plotArea(width: width, height: height)
        let bottom = Double(a.y + a.height)
        cairo_set_source_rgb(cr, 0, 0, 0)
        guard seconds > 0 else { text(cr, "time (s)", x: Double(a.x + a.width), y: bottom + 34, align: 1); return }
        let step = niceStep(seconds / max(1, Double(a.width) / 110))
        var t = 0.0
        while t <= seconds * (1 + 1e-9) {
            let x = Double(a.x) + Double(a.width) * t / seconds
            cairo_move_to(cr, x, bottom)
            cairo_line_to(cr, x, bottom + 5)
            cairo_stroke(cr)
            text(cr, formatTick(t, step: step), x: x, y: bottom + 18, align: 0.5)
            t += step
        }
        text(cr, "time (s)", x: Double(a.x + a.width), y: bottom + 34, align: 1)
    }

    /// Ticks, grid lines and labels of a log frequency axis: along x (spectrum) or y (spectrogram).
    static func frequencyAxis(_ cr: OpaquePointer, sampleRate: Double, width: Int, height: Int, vertical: Bool) {
        let a = plotArea(width: width, height: height)
        var ticks: [Double] = []
        var decade = 10.0
        while decade < sampleRate / 2 {
            for m in [1.0, 2, 5] where decade * m >= lowestFrequency && decade * m <= sampleRate / 2 { ticks.append(decade * m) }
            decade *= 10
        }
        for f in ticks {
            let t = logPosition(f, sampleRate: sampleRate)
            let label = f >= 1000 ? "\(formatTick(f / 1000, step: 1))k" : "\(Int(f))"
            if vertical {
                let y = Double(a.y + a.height) - Double(a.height) * t
                cairo_set_source_rgb(cr, 0, 0, 0)
                cairo_move_to(cr, Double(a.x) - 5, y)
                cairo_line_to(cr, Double(a.x), y)
                cairo_stroke(cr)
                text(cr, label, x: Double(a.x) - 7, y: y + 4, align: 1)
            } else {
                let x = Double(a.x) + Double(a.width) * t
                gridLine(cr, x0: x, y0: Double(a.y), x1: x, y1: Double(a.y + a.height))
                cairo_set_source_rgb(cr, 0, 0, 0)
                text(cr, label, x: x, y: Double(a.y + a.height) + 18, align: 0.5)
            }
        }
        cairo_set_source_rgb(cr, 0, 0, 0)
        if vertical {
            text(cr, "Hz", x: 8, y: Double(a.y) - 8, align: 0)
        } else {
            text(cr, "frequency (Hz)", x: Double(a.x + a.width), y: Double(a.y + a.height) + 34, align: 1)
        }
    }

    /// A light grey line.
    static func gridLine(_ cr: OpaquePointer, x0: Double, y0: Double, x1: Double, y1: Double) {
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85)
        cairo_set_line_width(cr, 1)
        cairo_move_to(cr, x0, y0)
        cairo_line_to(cr, x1, y1)
        cairo_stroke(cr)
    }

    /// The plot area's outline.
    static func border(_ cr: OpaquePointer, width: Int, height: Int) {
        let a = plotArea(width: width, height: height)
        cairo_set_source_rgb(cr, 0, 0, 0)
        cairo_set_line_width(cr, 1)
        cairo_rectangle(cr, Double(a.x) - 0.5, Double(a.y) - 0.5, Double(a.width) + 1, Double(a.height) + 1)
        cairo_stroke(cr)
    }

    /// `string` with its baseline at `y`, its left (align 0), centre (0.5) or right (1) at `x`.
    static func text(_ cr: OpaquePointer, _ string: String, x: Double, y: Double, align: Double) {
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, string, &extents)
        cairo_move_to(cr, x - extents.x_advance * align, y)
        cairo_show_text(cr, string)
    }

    /// 1, 2 or 5 × a power of ten, at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        let power = pow(10, floor(log10(max(raw, 1e-9))))
        for m in [1.0, 2, 5, 10] where m * power >= raw { return m * power }
        return 10 * power
    }

    /// A tick value with as many decimals as its step needs.
    static func formatTick(_ value: Double, step: Double) -> String {
        let decimals = max(0, Int(ceil(-log10(step) - 1e-9)))
        if decimals == 0 { return "\(Int(value.rounded()))" }
        let scale = pow(10, Double(decimals))
        let v = (value * scale).rounded() / scale
        return "\(v)"
    }
}
