"""The console's views, over the Django test client and in a real browser."""
