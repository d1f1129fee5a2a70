import PostgresNIO
import TresorWebStore
public enum PostgresPlaceholder {}
