"""Access: tokens, JWT, OAuth, single sign-on, grants, the recorded policy, limits."""
