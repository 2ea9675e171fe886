"""The git-native loop: cascading rule files, staged content, the hook and its gate."""
