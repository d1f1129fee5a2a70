/// Splits what an import sends into requests the daemon accepts: each at most `maxCount`
/// elements and about `maxBytes` (an element larger than that alone is a request of its own).
/// - Parameters:
///   - elements: in their order.
///   - maxCount: elements per request.
///   - maxBytes: bytes per request, as `size` estimates them.
///   - size: an element's size on the wire (an estimate that errs large).
/// - Returns: the requests' elements, in order.
func requestBatches<Element>(_ elements: [Element], maxCount: Int = .max, maxBytes: Int, size: (Element) throws -> Int) rethrows -> [[Element]] {
    var batches: [[Element]] = []
    var current: [Element] = []
    var bytes = 0
    for element in elements {
        let elementSize = try size(element)
        if !current.isEmpty && (current.count == maxCount || bytes + elementSize > maxBytes) {
            batches.append(current)
            current = []
            bytes = 0
        }
        current.append(element)
        bytes += elementSize
    }
    if !current.isEmpty { batches.append(current) }
    return batches
}
