#include "parley_test_mixer.h"
#include <alsa/control_external.h>
#include <string.h>
#include <errno.h>

enum { KEY_VOLUME = 0, KEY_SWITCH = 1, CHANNELS = 2 };

static struct {
    long min, max;
    int with_switch;
    long volume[CHANNELS];
    long on[CHANNELS];
    int volume_writes;
    snd_ctl_ext_t ext;
} card;

static int elem_count(snd_ctl_ext_t *ext) { (void)ext; return card.with_switch ? 2 : 1; }

static int elem_list(snd_ctl_ext_t *ext, unsigned int offset, snd_ctl_elem_id_t *id) {
    (void)ext;
    snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_MIXER);
    snd_ctl_elem_id_set_name(id, offset == KEY_VOLUME ? "Speaker Playback Volume" : "Speaker Playback Switch");
    return 0;
}

static snd_ctl_ext_key_t find_elem(snd_ctl_ext_t *ext, const snd_ctl_elem_id_t *id) {
    (void)ext;
    const char *name = snd_ctl_elem_id_get_name(id);
    if (strcmp(name, "Speaker Playback Volume") == 0) return KEY_VOLUME;
    if (card.with_switch && strcmp(name, "Speaker Playback Switch") == 0) return KEY_SWITCH;
    return SND_CTL_EXT_KEY_NOT_FOUND;
}

static int get_attribute(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, int *type, unsigned int *acc, unsigned int *count) {
    (void)ext;
    *type = key == KEY_VOLUME ? SND_CTL_ELEM_TYPE_INTEGER : SND_CTL_ELEM_TYPE_BOOLEAN;
    *acc = SND_CTL_EXT_ACCESS_READWRITE;
    *count = CHANNELS;
    return 0;
}

static int get_integer_info(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *imin, long *imax, long *istep) {
    (void)ext;
    if (key != KEY_VOLUME) { *imin = 0; *imax = 1; *istep = 1; return 0; }
    *imin = card.min;
    *imax = card.max;
    *istep = 1;
    return 0;
}

static int read_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value) {
    (void)ext;
    memcpy(value, key == KEY_VOLUME ? card.volume : card.on, sizeof(long) * CHANNELS);
    return 0;
}

static int write_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value) {
    (void)ext;
    long *target = key == KEY_VOLUME ? card.volume : card.on;
    int changed = memcmp(target, value, sizeof(long) * CHANNELS) != 0;
    memcpy(target, value, sizeof(long) * CHANNELS);
    if (key == KEY_VOLUME) card.volume_writes++;
    return changed;
}

static int read_event(snd_ctl_ext_t *ext, snd_ctl_elem_id_t *id, unsigned int *event_mask) {
    (void)ext; (void)id; (void)event_mask;
    return -EAGAIN;
}

static const snd_ctl_ext_callback_t callbacks = {
    .elem_count = elem_count,
    .elem_list = elem_list,
    .find_elem = find_elem,
    .get_attribute = get_attribute,
    .get_integer_info = get_integer_info,
    .read_integer = read_integer,
    .write_integer = write_integer,
    .read_event = read_event,
};

void parley_test_mixer_reset(long min, long max, int with_switch) {
    card.min = min;
    card.max = max;
    card.with_switch = with_switch;
    for (int c = 0; c < CHANNELS; c++) { card.volume[c] = max; card.on[c] = 1; }
    card.volume_writes = 0;
}

int parley_test_mixer_attach(snd_mixer_t *mixer) {
    memset(&card.ext, 0, sizeof card.ext);
    card.ext.version = SND_CTL_EXT_VERSION;
    card.ext.card_idx = 0;
    strcpy(card.ext.id, "ParleyTest");
    strcpy(card.ext.driver, "parley-test");
    strcpy(card.ext.name, "Parley test card");
    strcpy(card.ext.longname, "Parley test card (in-process control)");
    strcpy(card.ext.mixername, "Parley test mixer");
    card.ext.poll_fd = -1;
    card.ext.callback = &callbacks;
    int rc = snd_ctl_ext_create(&card.ext, "parley-test", 0);
    if (rc < 0) return rc;
    snd_hctl_t *hctl = NULL;
    rc = snd_hctl_open_ctl(&hctl, card.ext.handle);
    if (rc < 0) { snd_ctl_close(card.ext.handle); return rc; }
    rc = snd_mixer_attach_hctl(mixer, hctl);
    if (rc < 0) return rc;  // snd_mixer_attach_hctl closes hctl on failure
    return 0;
}

long parley_test_mixer_volume(int channel) { return card.volume[channel]; }
int parley_test_mixer_switch(int channel) { return (int)card.on[channel]; }
int parley_test_mixer_volume_writes(void) { return card.volume_writes; }
