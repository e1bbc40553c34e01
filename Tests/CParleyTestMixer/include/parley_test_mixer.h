// A sound card's control device that lives in the test process: alsa-lib's
// external control plugin API (snd_ctl_ext) with one playback volume and
// switch, so tests drive the real simple-mixer code of alsa-lib (hctl,
// simple elements, ranges) on a machine with no sound card, and read back
// what it wrote. Test-only.
#pragma once
#include <alsa/asoundlib.h>

/// Resets the card: "Speaker Playback Volume" (2 channels, min...max, both
/// at max) and, when with_switch is non-zero, "Speaker Playback Switch" (on).
void parley_test_mixer_reset(long min, long max, int with_switch);

/// Attaches the card to a simple mixer, as snd_mixer_attach does for "hw:N"
/// (the mixer owns and closes the control handle). 0 or a negative errno.
int parley_test_mixer_attach(snd_mixer_t *mixer);

/// The volume's channel values and the switch as the card holds them.
long parley_test_mixer_volume(int channel);
int parley_test_mixer_switch(int channel);
/// Writes to the volume through the plugin so far (both channels count once).
int parley_test_mixer_volume_writes(void);
