/* Apple Foundation API that GNUstep Base 1.28 lacks, declared for the syntax check only.
 * Foundation is not open source: these follow the macOS SDK's NSData.h as Apple documents it
 * (NSDataReadingOptions: NSDataReadingMappedIfSafe = 1UL << 0, NSDataReadingUncached = 1UL << 1;
 * + dataWithContentsOfFile:options:error:, macOS 10.4 and later). */
#import <Foundation/Foundation.h>
typedef NSUInteger NSDataReadingOptions;
enum { NSDataReadingMappedIfSafe = 1UL << 0, NSDataReadingUncached = 1UL << 1 };
@interface NSData (SBDarwinCheck)
+ (id)dataWithContentsOfFile:(NSString *)path options:(NSDataReadingOptions)readOptionsMask error:(NSError **)errorPtr;
@end
