/// Namespace for the ParleyHardware module; see README "Architecture".
public enum ParleyHardwareModule {}
