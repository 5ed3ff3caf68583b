"""The app's screens: dashboard, launch, job detail, results, help, and small dialogs."""
