"""The person's data as a whole: backups, restore, encryption at rest, export and import. Qt-free."""
