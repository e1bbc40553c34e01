import CALSA
import Glibc

/// The simple-mixer part of the libasound function table (`ALSAFunctions.mixer`):
/// every `snd_mixer_*` call `ALSAMixer` makes, so call-trace tests record
/// them and inject failures (no card, no such control) as for the PCM calls.
/// Entries return libasound's status convention (negative errno) and never throw.
/// `snd_mixer_t *` and `snd_mixer_elem_t *` are `OpaquePointer`s owned by `ALSAMixer`.
struct ALSAMixerFunctions: Sendable {
    /// `snd_mixer_open`.
    var open: @Sendable () -> (Int32, OpaquePointer?)
    /// `snd_mixer_attach` to a card's control device ("hw:0", "default").
    var attach: @Sendable (_ mixer: OpaquePointer, _ card: String) -> Int32
    /// `snd_mixer_selem_register` with the default (basic) abstraction.
    var register: @Sendable (OpaquePointer) -> Int32
    /// `snd_mixer_load`.
    var load: @Sendable (OpaquePointer) -> Int32
    /// `snd_mixer_close`.
    var close: @Sendable (OpaquePointer) -> Int32
    /// `snd_mixer_find_selem` by name and index (the selem id is made and freed inside).
    var find: @Sendable (_ mixer: OpaquePointer, _ name: String, _ index: UInt32) -> OpaquePointer?
    /// The simple elements' names (`snd_mixer_first_elem`/`elem_next`/`selem_get_name`), for error messages.
    var elementNames: @Sendable (OpaquePointer) -> [String]
    /// `snd_mixer_selem_has_playback_volume` / `_switch`.
    var hasPlaybackVolume: @Sendable (OpaquePointer) -> Bool
    var hasPlaybackSwitch: @Sendable (OpaquePointer) -> Bool
    /// `snd_mixer_selem_get_playback_volume_range`: (status, min, max).
    var playbackVolumeRange: @Sendable (OpaquePointer) -> (Int32, Int, Int)
    /// `snd_mixer_selem_set_playback_volume_all` / `snd_mixer_selem_get_playback_volume` (front left).
    var setPlaybackVolume: @Sendable (OpaquePointer, Int) -> Int32
    var playbackVolume: @Sendable (OpaquePointer) -> (Int32, Int)
    /// `snd_mixer_selem_set_playback_switch_all` / `snd_mixer_selem_get_playback_switch` (front left; on = sound).
    var setPlaybackSwitch: @Sendable (OpaquePointer, Bool) -> Int32
    var playbackSwitch: @Sendable (OpaquePointer) -> (Int32, Bool)

    /// The real libasound.
    static let system = ALSAMixerFunctions(
        open: {
            var mixer: OpaquePointer?
            let rc = snd_mixer_open(&mixer, 0)
            return (rc, mixer)
        },
        attach: { snd_mixer_attach($0, $1) },
        register: { snd_mixer_selem_register($0, nil, nil) },
        load: { snd_mixer_load($0) },
        close: { snd_mixer_close($0) },
        find: { mixer, name, index in
            var id: OpaquePointer?
            guard snd_mixer_selem_id_malloc(&id) >= 0, let id else { return nil }
            defer { snd_mixer_selem_id_free(id) }
            snd_mixer_selem_id_set_name(id, name)
            snd_mixer_selem_id_set_index(id, index)
            return snd_mixer_find_selem(mixer, id)
        },
        elementNames: { mixer in
            var names: [String] = []
            var element = snd_mixer_first_elem(mixer)
            while let current = element {
                if let name = snd_mixer_selem_get_name(current) { names.append(String(cString: name)) }
                element = snd_mixer_elem_next(current)
            }
            return names
        },
        hasPlaybackVolume: { snd_mixer_selem_has_playback_volume($0) != 0 },
        hasPlaybackSwitch: { snd_mixer_selem_has_playback_switch($0) != 0 },
        playbackVolumeRange: { element in
            var low = 0
            var high = 0
            let rc = snd_mixer_selem_get_playback_volume_range(element, &low, &high)
            return (rc, low, high)
        },
        setPlaybackVolume: { snd_mixer_selem_set_playback_volume_all($0, $1) },
        playbackVolume: { element in
            var value = 0
            let rc = snd_mixer_selem_get_playback_volume(element, SND_MIXER_SCHN_FRONT_LEFT, &value)
            return (rc, value)
        },
        setPlaybackSwitch: { snd_mixer_selem_set_playback_switch_all($0, $1 ? 1 : 0) },
        playbackSwitch: { element in
            var value: Int32 = 0
            let rc = snd_mixer_selem_get_playback_switch(element, SND_MIXER_SCHN_FRONT_LEFT, &value)
            return (rc, value != 0)
        }
    )
}
