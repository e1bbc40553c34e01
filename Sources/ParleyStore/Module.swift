/// Namespace for the ParleyStore module; see README "Architecture".
public enum ParleyStoreModule {}
