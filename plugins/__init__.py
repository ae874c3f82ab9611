"""Built-in board plugins (entry points of group "buildtool.targets")."""
