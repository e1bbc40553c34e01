/// Namespace for the ParleyTestKit module; see README "Architecture".
public enum ParleyTestKitModule {}
