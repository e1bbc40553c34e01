/// Namespace for the ParleyApps module; see README "Architecture".
public enum ParleyAppsModule {}
