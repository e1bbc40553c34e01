/// Namespace for the ParleyAudio module; see README "Architecture".
public enum ParleyAudioModule {}
