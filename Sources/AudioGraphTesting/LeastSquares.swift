// Small dense least-squares solvers (Householder QR, pivoted elimination) behind ToneFit and frequency estimates.

/// Dense linear least squares in `Double`, for the measurement helpers.
///
/// Thread safety: stateless.
enum LeastSquares {
    /// Minimises ‖A·c − b‖ by Householder QR. `columns[j]` is column j of A (all of length
    /// b.count, at least as many rows as columns). A column that is (numerically) a combination
    /// of earlier ones gets coefficient 0 instead of a huge value.
    static func solve(columns: [[Double]], rightHandSide b: [Double]) -> [Double] {
        let rows = b.count
        let k = columns.count
        precondition(columns.allSatisfy { $0.count == rows }, "every column needs one entry per row")
        precondition(rows >= k, "least squares needs at least as many samples as unknowns")
        // Column-major copy of A followed by b, worked on in place through one buffer pointer
        // (this runs in debug builds of the tests too, where nested array access is slow).
        var storage = columns.flatMap { $0 } + b
        var diagonal = [Double](repeating: 0, count: k)
        var usable = [Bool](repeating: true, count: k)
        let scale = columns.map { column in column.reduce(0) { $0 + $1 * $1 }.squareRoot() }

        storage.withUnsafeMutableBufferPointer { m in
            let m = m.baseAddress!
            for j in 0..<k {
                let v = m + j * rows  // column j; its tail j..<rows becomes the Householder vector
                var norm = 0.0
                for i in j..<rows { norm += v[i] * v[i] }
                norm = norm.squareRoot()
                if norm <= 1e-12 * max(scale[j], .leastNormalMagnitude) {
                    usable[j] = false
                    continue
                }
                let alpha = v[j] > 0 ? -norm : norm
                v[j] -= alpha
                var vv = 0.0
                for i in j..<rows { vv += v[i] * v[i] }
                diagonal[j] = alpha
                // Reflect the remaining columns and the right-hand side (stored as column k).
                for c in (j + 1)...k {
                    let u = m + c * rows
                    var dot = 0.0
                    for i in j..<rows { dot += v[i] * u[i] }
                    let f = 2 * dot / vv
                    for i in j..<rows { u[i] -= f * v[i] }
                }
            }
        }

        // Back substitution on R (R[i][c] = A'[i, c] above the diagonal, diagonal[i] on it).
        var coefficients = [Double](repeating: 0, count: k)
        for i in stride(from: k - 1, through: 0, by: -1) where usable[i] {
            var sum = storage[k * rows + i]
            for c in (i + 1)..<max(i + 1, k) where usable[c] { sum -= storage[c * rows + i] * coefficients[c] }
            coefficients[i] = sum / diagonal[i]
        }
        return coefficients
    }

    /// Solves the small square system G·c = h by Gaussian elimination with partial pivoting;
    /// nil when G is singular to working precision.
    static func solveSymmetric(_ g: [[Double]], _ h: [Double]) -> [Double]? {
        let n = h.count
        var m = g
        var r = h
        let scale = g.flatMap { $0 }.map(\.magnitude).max() ?? 0
        for column in 0..<n {
            var pivot = column
            for row in column..<n where m[row][column].magnitude > m[pivot][column].magnitude { pivot = row }
            guard m[pivot][column].magnitude > 1e-12 * scale else { return nil }
            m.swapAt(column, pivot)
            r.swapAt(column, pivot)
            for row in (column + 1)..<max(column + 1, n) {
                let f = m[row][column] / m[column][column]
                for c in column..<n { m[row][c] -= f * m[column][c] }
                r[row] -= f * r[column]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var sum = r[row]
            for c in (row + 1)..<max(row + 1, n) { sum -= m[row][c] * x[c] }
            x[row] = sum / m[row][row]
        }
        return x
    }
}
