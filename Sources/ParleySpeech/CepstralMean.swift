import CPocketSphinx

/// How a decoder normalises its cepstra (`feat_t.cmn`, a `cmn_type_t`).
/// The library switches itself to live CMN for good after the first block
/// of streamed audio, so a decoder that must normalise each utterance on its
/// own (batch) has to be told again before each one.
enum CepstralMeanMode {
    /// Mean of the current utterance (CMN_BATCH; full-utterance decodes only).
    case batch
    /// Running mean carried across utterances (CMN_LIVE).
    case live
}

extension SphinxDecoder {
    /// The running cepstral mean of the live normalisation (13 values;
    /// `cmn_live_get`/`cmn_live_set` on `ps_get_feat(ps)->cmn_struct`).
    /// Setting it also resets the running sums to that mean, so two decodes
    /// started from the same mean normalise the same frames identically.
    var cepstralMean: [Float] {
        get {
            guard let feat = ps_get_feat(ps), let cmn = feat.pointee.cmn_struct else { return [] }
            var mean = [Float](repeating: 0, count: Int(cmn.pointee.veclen))
            mean.withUnsafeMutableBufferPointer { cmn_live_get(cmn, $0.baseAddress) }
            return mean
        }
        set {
            guard let feat = ps_get_feat(ps), let cmn = feat.pointee.cmn_struct,
                  newValue.count == Int(cmn.pointee.veclen) else { return }
            newValue.withUnsafeBufferPointer { cmn_live_set(cmn, $0.baseAddress) }
        }
    }

    /// The live normalisation's whole state (its mean, running sums and
    /// frame count), to put back exactly after a decode that must not move
    /// it (`StreamingCommandDecoder.decodeAside`); `cepstralMean`'s setter
    /// resets the sums, so it cannot.
    struct LiveNormalisation: Sendable, Equatable {
        var mean: [Float]
        var sum: [Float]
        var frames: Int32
    }

    var liveNormalisation: LiveNormalisation? {
        get {
            guard let feat = ps_get_feat(ps), let cmn = feat.pointee.cmn_struct else { return nil }
            let count = Int(cmn.pointee.veclen)
            return LiveNormalisation(mean: Array(UnsafeBufferPointer(start: cmn.pointee.cmn_mean, count: count)),
                                     sum: Array(UnsafeBufferPointer(start: cmn.pointee.sum, count: count)),
                                     frames: cmn.pointee.nframe)
        }
        set {
            guard let newValue, let feat = ps_get_feat(ps), let cmn = feat.pointee.cmn_struct,
                  newValue.mean.count == Int(cmn.pointee.veclen), newValue.sum.count == newValue.mean.count else { return }
            for i in 0..<newValue.mean.count {
                cmn.pointee.cmn_mean[i] = newValue.mean[i]
                cmn.pointee.sum[i] = newValue.sum[i]
            }
            cmn.pointee.nframe = newValue.frames
        }
    }

    /// The normalisation the next utterance uses (`feat_t.cmn`). A batch
    /// decode leaves its utterance's mean as the starting point of the live
    /// normalisation that follows (one `cmn_t` serves both).
    var cepstralMeanMode: CepstralMeanMode {
        get { ps_get_feat(ps)?.pointee.cmn == CMN_BATCH ? .batch : .live }
        set {
            guard let feat = ps_get_feat(ps) else { return }
            feat.pointee.cmn = newValue == .batch ? CMN_BATCH : CMN_LIVE
        }
    }
}
