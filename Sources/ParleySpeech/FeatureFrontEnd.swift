import CPocketSphinx

/// A PocketSphinx front end of its own (`fe_t`, from `fe_init_auto_r` on a
/// decoder's configuration, freed with `fe_free`): turns audio into the
/// cepstra that decoder expects, so one window can be decoded by several
/// searches on exactly the same frames (`SphinxDecoder.decode(cepstra:)`).
/// With the decoder's own front end, each decode of the same audio runs the
/// voice activity detector and noise tracker again and keeps other frames.
final class FeatureFrontEnd {
    private let fe: OpaquePointer
    let width: Int

    init(for decoder: SphinxDecoder) throws {
        fe = try checkSphinx(fe_init_auto_r(ps_get_config(decoder.ps)), "fe_init_auto_r")
        width = Int(fe_get_output_size(fe))
    }

    deinit { fe_free(fe) }

    /// The cepstra of one utterance, frame by frame (silence the detector
    /// drops is left out, as in the decoder).
    func cepstra(_ samples: [Int16]) throws -> [[Float]] {
        try checkSphinx(fe_start_utt(fe), "fe_start_utt")
        var frames: [[Float]] = []
        let block = 64
        var storage = [Float](repeating: 0, count: block * width)
        try samples.withUnsafeBufferPointer { audio in
            var pointer = audio.baseAddress
            var remaining = audio.count
            while remaining > 0 {
                var produced = Int32(block)
                let before = remaining
                try storage.withUnsafeMutableBufferPointer { flat in
                    var rows: [UnsafeMutablePointer<Float>?] = (0..<block).map { flat.baseAddress! + $0 * width }
                    try rows.withUnsafeMutableBufferPointer { rowPointers in
                        try checkSphinx(fe_process_frames(fe, &pointer, &remaining, rowPointers.baseAddress, &produced, nil),
                                        "fe_process_frames")
                    }
                }
                for i in 0..<Int(produced) { frames.append(Array(storage[(i * width)..<((i + 1) * width)])) }
                if produced == 0 && remaining == before { break }
            }
        }
        var last = [Float](repeating: 0, count: width)
        var count: Int32 = 0
        try checkSphinx(fe_end_utt(fe, &last, &count), "fe_end_utt")
        if count > 0 { frames.append(last) }
        return frames
    }
}

extension SphinxDecoder {
    /// Decodes one utterance given as cepstra (ps_process_cep, whole
    /// utterance at once) with the active search.
    func decode(cepstra: [[Float]]) throws -> Hypothesis? {
        try startUtterance()
        var flat = cepstra.flatMap { $0 }
        let width = cepstra.first?.count ?? 0
        try flat.withUnsafeMutableBufferPointer { buffer in
            var rows: [UnsafeMutablePointer<Float>?] = (0..<cepstra.count).map { buffer.baseAddress! + $0 * width }
            try rows.withUnsafeMutableBufferPointer { rowPointers in
                try checkSphinx(ps_process_cep(ps, rowPointers.baseAddress, Int32(cepstra.count), 0, 1), "ps_process_cep")
            }
        }
        try endUtterance()
        return hypothesis()
    }
}

extension SphinxDecoder {
    /// A hypothesis' path score (acoustic and grammar) in nats. Path scores,
    /// like segment scores, are logmath units shifted right by 10 bits.
    func pathScore(_ hypothesis: Hypothesis) -> Double {
        naturalLog(hypothesis.score) * 1024
    }
}
