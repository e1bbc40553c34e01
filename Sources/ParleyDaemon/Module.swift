/// Namespace for the ParleyDaemon module; see README "Architecture".
public enum ParleyDaemonModule {}
