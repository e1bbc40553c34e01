/// Namespace for the ParleySpeech module; see README "Architecture".
public enum ParleySpeechModule {}
