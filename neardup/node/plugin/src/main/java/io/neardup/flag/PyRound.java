package io.neardup.flag;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Python's {@code round(x, places)} for a float: the exact binary value rounded half-to-even at the decimal place,
 * then the nearest double. Stored similarities and combined scores are rounded this way in Python; a Java
 * {@code Math.round(x * 10000) / 10000.0} differs on values such as 2.675 (whose binary value lies below the tie).
 */
public final class PyRound {
    private PyRound() {}

    /** {@code round(x, places)}; zero, infinities and NaN come back unchanged, as in Python. */
    public static double round(double x, int places) {
        if (x == 0.0 || Double.isFinite(x) == false) {
            return x;
        }
        return new BigDecimal(x).setScale(places, RoundingMode.HALF_EVEN).doubleValue();
    }
}
