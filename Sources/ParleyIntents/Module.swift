/// Namespace for the ParleyIntents module; see README "Architecture".
public enum ParleyIntentsModule {}
