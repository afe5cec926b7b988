"""Text, tabular and snapshot logging: ``logger`` (module functions) and ``context.logger_context``."""
